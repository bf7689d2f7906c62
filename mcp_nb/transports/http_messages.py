"""What an HTTP transport must know of the JSON-RPC it carries, and how it shows HTTP in text.

stdio can stay ignorant of JSON-RPC; HTTP cannot: a request is answered on its
own POST's response, a notification gets 202, a cancellation stops a stream
from being resumed, and a stateless-era request mirrors parts of its body into
headers.  :class:`Outgoing` is one sent frame read just that far.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from ..protocol.envelope import encode
from ..protocol.stateless import META_PROTOCOL_VERSION

_BODY_EXCERPT = 300


def abbreviate(value: str, keep: int = 8) -> str:
    """Shorten a session id for display; the whole value is noise in a transcript line."""
    return value if len(value) <= keep + 1 else value[:keep] + "…"


#: How a caller-supplied header's value is shown: transcripts are shared, credentials not.
REDACTED = "<redacted>"


def shown_headers(headers: Mapping[str, str], custom_names: Collection[str]) -> list[str]:
    """The headers worth a transcript line; those in ``custom_names`` (lower case) redacted."""
    shown = []
    for name, value in headers.items():
        lower = name.lower()
        if lower in custom_names:
            shown.append(f"{name}: {REDACTED}")
        elif lower == "mcp-session-id":
            shown.append(f"{name}: {abbreviate(value)}")
        elif lower in ("mcp-protocol-version", "last-event-id", "mcp-method", "mcp-name") \
                or lower.startswith("mcp-param-"):  # mirrors the body, shown there anyway
            shown.append(f"{name}: {value}")
    return shown


def path_of(url: str | httpx.URL) -> str:
    """``/mcp?x=1`` for ``http://host:port/mcp?x=1``: enough to tell endpoints apart."""
    parsed = httpx.URL(url)
    query = parsed.query.decode()
    return parsed.path + (f"?{query}" if query else "")


def content_type(response: httpx.Response) -> str:
    """The media type alone, lower-cased (``text/event-stream; charset=utf-8`` → the first part)."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def excerpt(body: bytes) -> str:
    """The start of a response body, readable in one transcript line."""
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= _BODY_EXCERPT else text[:_BODY_EXCERPT] + "…"


def json_rpc_message(body: bytes | str) -> dict[str, Any] | None:
    """The body as a JSON-RPC message object, or None if it is something else."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
        return message
    return None


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One frame the session sent, read just far enough to route it over HTTP.

    HTTP cannot stay as ignorant of JSON-RPC as stdio: a request is answered on
    its own POST's response, a notification gets 202, and a cancellation tells the
    transport to stop resuming the cancelled request's stream.
    """

    frame: bytes
    kind: str  # "request", "notification", "response" or "other" (a batch, say)
    id: str | int | None = None
    method: str | None = None
    #: For ``notifications/cancelled``: the id of the request it cancels.
    cancels: str | int | None = None
    #: A stateless-era request's ``_meta`` protocol version (None: handshake era).
    stateless_version: str | None = None
    #: ``params.name`` or ``params.uri`` of a stateless request (its ``Mcp-Name``).
    name: str | None = None

    @classmethod
    def read(cls, frame: bytes) -> Outgoing:
        try:
            message = json.loads(frame)
        except ValueError:
            return cls(frame, "other")
        if not isinstance(message, dict):
            return cls(frame, "other")
        method, message_id = message.get("method"), message.get("id")
        if method is None:
            return cls(frame, "response", message_id)
        params = message.get("params")
        if "id" in message:
            version = name = None
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get(META_PROTOCOL_VERSION), str):
                version = meta[META_PROTOCOL_VERSION]
                if method in NAMED_METHODS:
                    value = params.get(NAMED_METHODS[method])
                    name = value if isinstance(value, str) else None
            return cls(frame, "request", message_id, method, stateless_version=version,
                       name=name)
        cancels = (params.get("requestId") if method == "notifications/cancelled"
                   and isinstance(params, dict) else None)
        return cls(frame, "notification", None, method, cancels)

    @property
    def label(self) -> str:
        """E.g. ``request tools/call #3``, ``notification notifications/initialized``."""
        parts = [self.kind]
        if self.method:
            parts.append(self.method)
        if self.id is not None:
            parts.append(f"#{self.id}")
        return " ".join(parts)

    def stateless_headers(self) -> dict[str, str]:
        """The headers a stateless-era POST mirrors from its body (2026-07-28).

        Intermediaries route on them without parsing JSON, so the server
        rejects a POST whose headers disagree with the body (-32020).
        """
        assert self.stateless_version is not None
        headers = {"MCP-Protocol-Version": self.stateless_version,
                   "Mcp-Method": str(self.method)}
        if self.name is not None:
            headers["Mcp-Name"] = header_value(self.name)
        return headers

    def reissued(self, attempt: int) -> Outgoing:
        """This request again as a new request with a new id (``#3`` → ``#3.reissue-1``).

        2026-07-28 (changelog, SEP-2575): a broken response stream loses the
        request, and the client must re-issue it as a new request with a new id.
        """
        message = json.loads(self.frame)
        message["id"] = f"{self.id}.reissue-{attempt}"
        return replace(self, frame=encode(message), id=message["id"])

    def answer_as(self, original: Outgoing, frame: bytes) -> bytes:
        """``frame`` with the id of ``original`` if it answers this re-issued request."""
        if self.id == original.id:
            return frame
        message = json_rpc_message(frame)
        if not self.is_answered_by(message):
            return frame
        assert message is not None
        return encode({**message, "id": original.id})

    def is_answered_by(self, message: dict[str, Any] | None) -> bool:
        """True if ``message`` is the response (result or error) to this request."""
        return (
            self.kind == "request" and message is not None and "method" not in message
            and message.get("id") == self.id
        )


#: Stateless requests whose ``Mcp-Name`` header mirrors a param, and which one: the
#: name or uri (SEP-2243), the task id for the tasks extension's requests (SEP-2663).
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                 "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
_BASE64_SENTINEL = ("=?base64?", "?=")


def header_value(text: str) -> str:
    """``text`` as an HTTP header value, Base64-wrapped when it is not plain ASCII.

    Plain means printable ASCII (and space) with no surrounding whitespace; a
    value that merely looks like the ``=?base64?…?=`` sentinel is wrapped too,
    so a server never decodes something that was not encoded.

    >>> header_value("get_weather"), header_value("Hello, 世界")
    ('get_weather', '=?base64?SGVsbG8sIOS4lueVjA==?=')
    """
    plain = (all(" " <= ch <= "~" for ch in text) and text == text.strip()
             and not (text.startswith(_BASE64_SENTINEL[0]) and text.endswith(_BASE64_SENTINEL[1])))
    if plain and text:
        return text
    encoded = base64.b64encode(text.encode()).decode("ascii")
    return f"{_BASE64_SENTINEL[0]}{encoded}{_BASE64_SENTINEL[1]}"
