"""The lab's JSON-RPC vocabulary: messages, errors, validated requests, the wire encoding."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_nb.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS

Message = dict[str, Any]
#: Delivers one outgoing message to the client; called from the loop thread only.
Send = Callable[[Message], None]
RequestId = str | int

_KIND_NAMES = {str: "a string", dict: "an object", list: "an array"}


def diag(text: str) -> None:
    """A diagnostic line on stderr: stdout belongs to the protocol alone.

    A client that closed our stderr must not be able to crash us, so write
    errors are swallowed.
    """
    with contextlib.suppress(OSError, ValueError):
        print(f"lab: {text}", file=sys.stderr, flush=True)


def encode_message(message: Message) -> bytes:
    """Compact UTF-8 JSON without raw newlines (stdio lines and SSE data lines alike)."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # lone surrogates survive only as \u escapes
        return json.dumps(message, separators=(",", ":")).encode()


def is_request_id(value: object) -> bool:
    """MCP ids are strings or integers; ``null`` and booleans are not ids."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class RpcError(Exception):
    """A JSON-RPC error, raised by handlers or received from the client."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        """The ``error`` member of a response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: object) -> RpcError:
        """Rebuild an error the client sent, tolerating a malformed one."""
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code")
            return cls(
                code if isinstance(code, int) else INTERNAL_ERROR,
                error["message"],
                error.get("data"),
            )
        return cls(INTERNAL_ERROR, f"malformed error object: {error!r}")


class ToolFailure(Exception):
    """A tool ran and failed: reported as a result with ``isError: true``.

    Tool failures are meant for the model to read and react to, so they travel
    as results; protocol errors are for the client program.
    """


def required_field(mapping: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """``mapping[key]`` if it has type ``kind``, else an Invalid params error naming it."""
    value = mapping.get(key)
    if not isinstance(value, kind):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {where}.{key} must be {_KIND_NAMES[kind]}")
    return value


@dataclass(frozen=True)
class Request:
    """One request from the client, validated enough to dispatch."""

    id: RequestId
    method: str
    params: dict[str, Any]
    #: Served in the stateless era: everything it needs is in ``params._meta``.
    stateless: bool = False

    def param(self, key: str, kind: type) -> Any:
        """A required parameter of the given JSON type."""
        return required_field(self.params, key, kind, f"{self.method} params")

    @property
    def meta(self) -> dict[str, Any]:
        """``params._meta`` (empty if absent or not an object)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> str | int | None:
        """``params._meta.progressToken``: present means the client wants progress."""
        token = self.meta.get("progressToken")
        return token if is_request_id(token) else None


def refuse_cursor(request: Request) -> None:
    """Every lab list fits one page, so any cursor is one this server never issued."""
    if "cursor" in request.params:
        raise RpcError(INVALID_PARAMS, "Invalid params: unknown cursor (lists are one page)")
