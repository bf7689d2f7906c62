"""What exported tests run on: a target server (the recording or the live one) and one comparison.

A file written by :func:`mcp_nb.recording.export.export_tests` holds the calls
and their recorded outcomes as data and imports only this module, so the
generated code stays short and the rules live in one place:

* :class:`Target` opens one session for the whole test module, against a replay
  of the recording (``MCP_NB_TARGET=recording``, the default) or the live
  server (``MCP_NB_TARGET=live``: the recorded command or URL, or the one in
  ``MCP_NB_COMMAND`` / ``MCP_NB_URL``).  The server's requests to the client
  (sampling, elicitation, roots) get the answers the recorded client gave.
* :func:`expect` compares an outcome with the recorded one: structured content
  and everything else exactly, ``text`` fields through the chosen normaliser,
  ``_meta`` ignored; a mismatch fails with the differences path by path.

Example (what a generated test does)::

    target = Target(recording_path, header)
    session = target.open()
    expect("tools/call add", session.outcome("tools/call", params), recorded, "exact")
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ..client import ServerError
from ..transports import StdioTransport, http_transport
from .compare import differences
from .format import Header, load
from .redact import REDACTED

#: How a recorded ``text`` and a live one are made comparable.
NORMALIZERS: dict[str, Callable[[str], str]] = {
    "exact": lambda text: text,
    "whitespace": lambda text: " ".join(text.split()),
    "numbers": lambda text: re.sub(r"\d+(\.\d+)?", "#", text),
}
_CLIENT_REQUESTS = {"sampling/createMessage": "on_sampling",
                    "elicitation/create": "on_elicitation", "roots/list": "on_roots"}


def comparable(value: Any, normalize: Callable[[str], str]) -> Any:
    """``value`` without ``_meta`` keys and with every ``text`` string normalised."""
    if isinstance(value, dict):
        return {key: (normalize(item) if key == "text" and isinstance(item, str)
                      else comparable(item, normalize))
                for key, item in value.items() if key != "_meta"}
    if isinstance(value, list):
        return [comparable(item, normalize) for item in value]
    return value


def expect(call: str, actual: dict[str, Any], recorded: dict[str, Any],
           normalize: str = "exact") -> None:
    """Fail with a readable, path-by-path diff unless ``actual`` matches ``recorded``.

    Both are outcomes: ``{"result": …}`` or ``{"error": {"code": …, "message": …}}``.
    """
    rule = NORMALIZERS[normalize]
    want, got = comparable(recorded, rule), comparable(actual, rule)
    if want != got:
        changes = "\n  ".join(differences(want, got, limit=40))
        raise AssertionError(f"{call}: the server no longer answers as recorded "
                             f"(recording → now, text compared {normalize}):\n  {changes}")


def _client_answers(recording_path: str) -> dict[str, list[dict[str, Any]]]:
    """What the recorded client answered to each kind of server request, in order."""
    recording = load(recording_path)
    asked: dict[Any, str] = {}
    answers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in recording.messages():
        message = record.message or {}
        if record.direction == "recv" and "method" in message and "id" in message:
            asked[message["id"]] = message["method"]
        elif record.direction == "send" and "method" not in message \
                and message.get("id") in asked and "result" in message:
            answers[asked[message["id"]]].append(message["result"])
    return answers


class _RecordedAnswers:
    """A handler for one server→client request: the recorded answers in turn, then the last."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self._answers = answers
        self._given = 0

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        answer = self._answers[min(self._given, len(self._answers) - 1)]
        self._given += 1
        return answer


class TargetSession:
    """A connected session to the target, usable from synchronous tests."""

    def __init__(self, hosted: Any, loop: Any) -> None:
        self._hosted, self._loop = hosted, loop

    def outcome(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """``{"result": …}`` or ``{"error": {"code", "message"}}`` for one request."""
        try:
            return {"result": self._hosted.request(method, params)}
        except ServerError as exc:
            return {"error": {"code": exc.code, "message": exc.message}}

    def close(self) -> None:
        try:
            self._hosted.close()
        finally:
            self._loop.stop()


class Target:
    """Where exported tests send their calls: a replay of the recording, or the live server."""

    def __init__(self, recording_path: str, header: dict[str, Any]) -> None:
        self.recording_path = recording_path
        self.header = Header(**header)
        self.kind = os.environ.get("MCP_NB_TARGET", "recording")
        if self.kind not in ("recording", "live"):
            raise ValueError(f"MCP_NB_TARGET is 'recording' or 'live', not {self.kind!r}")

    def transport(self) -> Any:
        """The transport to the chosen server (a replay over stdio by default)."""
        if self.kind == "recording":
            return StdioTransport([sys.executable, "-m", "mcp_nb.replay", self.recording_path,
                                   "--timing", "none"])
        if os.environ.get("MCP_NB_COMMAND"):
            return StdioTransport(shlex.split(os.environ["MCP_NB_COMMAND"]))
        if os.environ.get("MCP_NB_URL"):
            return http_transport(os.environ["MCP_NB_URL"])
        recorded = self.header.transport
        reached = recorded.get("command") or recorded.get("url")
        if not reached or REDACTED in str(reached) or recorded.get("env") \
                or recorded.get("headers"):
            raise RuntimeError(
                "the recorded server cannot be reached as recorded (secrets were redacted, or "
                "nothing was recorded): set MCP_NB_COMMAND or MCP_NB_URL")
        if "command" in recorded:
            return StdioTransport(recorded["command"], cwd=recorded.get("cwd"))
        return http_transport(recorded["url"])

    def open(self) -> TargetSession:
        """Connect in the recorded era and version, with the recorded client's answers ready."""
        from ..notebook.hosted import HostedSession
        from ..notebook.loop import BackgroundLoop

        handlers = {_CLIENT_REQUESTS[method]: _RecordedAnswers(answers)
                    for method, answers in _client_answers(self.recording_path).items()
                    if method in _CLIENT_REQUESTS}
        loop = BackgroundLoop("mcp_nb-exported-tests")
        try:
            hosted = HostedSession.open(
                "exported", self.transport(), loop, client_info=self.header.client_info or None,
                capabilities=self.header.client_capabilities, **handlers)
            hosted.connect(self.header.protocol_version, era=self.header.era)
        except BaseException:
            loop.stop()
            raise
        return TargetSession(hosted, loop)
