"""The checkup's tool-call checks: only ever on tools the user allowed (``--call-tools``).

Tools can have side effects, so ``tools/call`` is sent only for the tools
``call_tools`` names (or all of them with ``"all"``): ``tools.unknown-tool`` calls
a name no server lists, ``tools.input-errors`` leaves an allowed tool's required
arguments out, and each allowed tool whose arguments can be invented is called
once with a ``progressToken``: ``tools.progress`` judges the notifications under
that token, ``tools.cancellation`` what follows the ``notifications/cancelled``
sent at the second of them.

Example (what the runner does with it)::

    report = await run_checkup([sys.executable, "-m", "mcp_nb.lab"], call_tools="all")
    report.result("tools.progress").outcome   # 'pass': slow's progress increased
"""

from __future__ import annotations

import contextlib
import itertools
import time
from typing import Any

import anyio

from ..client import ClientSession
from ..client.errors import ServerError
from ..i18n import _
from ..protocol.envelope import Notification
from ..protocol.errors import McpError
from ..protocol.versions import Era
from .model import transcript_evidence as _entry
from .recorder import CheckupCore
from .shapes import is_number
from .synthesis import arguments_for

#: A name no server lists: the unknown tool (a suffix is added if one does).
UNKNOWN_TOOL = "checkup-no-such-tool"
#: A cancelled call's late answer is awaited twice as long as the call had run, within these.
CANCEL_WINDOW = (0.5, 3.0)
__all__ = ["TOOL_CALL_CHECKS", "ToolCallChecks", "arguments_for"]

TOOL_CALL_CHECKS = ("tools.unknown-tool", "tools.input-errors", "tools.progress",
                    "tools.cancellation")


def _required_names(tool: dict[str, Any]) -> list[str]:
    """The names a tool's inputSchema marks required (what tools.input-errors leaves out)."""
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    return [n for n in required if isinstance(n, str)] if isinstance(required, list) else []


class _CallRecord:
    """One allowed tool called with a progress token: what came back, and when."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.ids: list[int] = []
        #: Progress values received for this call's token before it was cancelled.
        self.progress: list[Any] = []
        self.enough = anyio.Event()
        self.started = time.monotonic()
        self.cancelled_at: float | None = None
        #: The id of a ping sent right behind notifications/cancelled.
        self.ping_ids: list[int] = []


class ToolCallChecks(CheckupCore):
    """tools.unknown-tool, tools.input-errors, tools.progress and tools.cancellation."""

    async def tool_calls(self, main: ClientSession, tools: list[Any]) -> None:
        allowed = [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
                   and (self.call_all or t["name"] in self.allowed)]
        if not allowed:
            self.skip(TOOL_CALL_CHECKS, _("no call allowed (--call-tools)") if not (
                self.call_all or self.allowed) else _("no listed tool is among those allowed"))
            return
        calls = [(_CallRecord(t["name"]), args) for t in allowed
                 if (args := arguments_for(t.get("inputSchema") or {})) is not None]
        by_token = {}
        foreign: list[dict[str, Any]] = []

        def on_notification(note: Notification) -> None:
            if note.method != "notifications/progress":
                return
            params = note.params or {}
            token = params.get("progressToken")
            record = next((r for r in by_token.values() if r.ids and token == r.ids[0]
                           and type(token) is int), None)
            if record is None:
                foreign.append(params)
            elif record.cancelled_at is None:
                record.progress.append(params.get("progress"))
                if len(record.progress) >= 2:
                    record.enough.set()

        stop = main.on_notification(on_notification)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self.tool_errors, main, allowed, tools)
                for record, arguments in calls:
                    by_token[record.tool] = record
                    group.start_soon(self.call_watching_progress, main, record, arguments)
        finally:
            stop()
        self.judge_progress(main, [r for r, _ in calls], foreign)

    async def tool_errors(self, main: ClientSession, allowed: list[dict[str, Any]],
                          tools: list[Any]) -> None:
        """tools.unknown-tool (a name nobody lists) and tools.input-errors (arguments left out)."""
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        unknown = UNKNOWN_TOOL
        while unknown in names:
            unknown += "-x"
        answer, evidence = await self.exchange(main, "main", "tools/call",
                                               {"name": unknown, "arguments": {}})
        check = "tools.unknown-tool"
        if not evidence:
            # Our own client refused to send it (the server declared no tools, say):
            # nothing reached the server, so there is nothing to judge.
            self.skip([check, "tools.input-errors"], _("tools/call was not sent: {why}").format(
                why=answer))
            return
        if isinstance(answer, ServerError):
            self.put(check, "pass", _("{tool} refused with error {code}").format(
                tool=repr(unknown), code=answer.code), evidence)
        elif isinstance(answer, dict):
            self.put(check, "fail", _("{tool}, a tool the server does not list, got a "
                     "result (isError {is_error}), not a JSON-RPC error").format(
                         tool=repr(unknown), is_error=repr(answer.get("isError"))),
                     evidence)
        else:
            self.put(check, "fail", f"{unknown!r}: {answer}", evidence)
        check = "tools.input-errors"
        target = next((t for t in allowed if _required_names(t)), None)
        if target is None:
            self.skip([check], _("no allowed tool has a required argument to leave out"))
            return
        answer, evidence = await self.exchange(main, "main", "tools/call",
                                               {"name": target["name"], "arguments": {}})
        missing = ", ".join(_required_names(target))
        called = _("{tool} called without its required {missing}").format(
            tool=repr(target["name"]), missing=missing)
        if isinstance(answer, dict) and answer.get("isError") is True:
            self.put(check, "pass", _("{called}: a result with isError: true").format(
                called=called), evidence)
        elif isinstance(answer, dict):
            self.put(check, "fail", _("{called}: a result without isError: true").format(
                called=called), evidence)
        elif isinstance(answer, ServerError):
            self.put(check, "fail", _("{called}: JSON-RPC error {code}, not a result with "
                     "isError: true (which lets a model correct itself)").format(
                         called=called, code=answer.code), evidence)
        else:
            self.put(check, "fail", f"{called}: {answer}", evidence)

    async def call_watching_progress(self, main: ClientSession, record: _CallRecord,
                                     arguments: dict[str, Any]) -> None:
        """Call with a progress token; cancel at the second progress, then watch for an answer."""
        done = anyio.Event()

        async def call() -> None:
            try:
                await main.request("tools/call", {"name": record.tool, "arguments": arguments},
                                   timeout=self.timeout, on_progress=lambda *_: None,
                                   on_sent=record.ids.append)
            except McpError:
                pass  # an error, a timeout or our own cancel: the notifications are judged
            finally:
                done.set()

        async def ping_behind_cancel() -> None:
            # A ping right behind the cancel marks when the server had read it: an answer
            # that arrives before the ping's may have crossed the cancel on the wire, which
            # the spec allows; only one after it is a late answer.
            with contextlib.suppress(McpError):
                await main.request("ping", timeout=self.timeout, on_sent=record.ping_ids.append)

        async def cancel_when_running(outer: anyio.abc.TaskGroup) -> None:
            await record.enough.wait()
            if not done.is_set() and record.ids:
                record.cancelled_at = time.monotonic()
                try:
                    await main.cancel(record.ids[0], "checkup: cancellation check")
                except ValueError:  # answered meanwhile
                    record.cancelled_at = None
                    return
                # In the outer group: our cancel ends the call, which ends this group, and
                # the ping must still get its answer (an abandoned one would be a response
                # to an unknown id).
                outer.start_soon(ping_behind_cancel)

        async with anyio.create_task_group() as outer, anyio.create_task_group() as group:
            group.start_soon(call)
            group.start_soon(cancel_when_running, outer)
            await done.wait()
            group.cancel_scope.cancel()
        if record.cancelled_at is None:
            return
        low, high = CANCEL_WINDOW
        window = min(self.timeout, high, max(low, 2 * (record.cancelled_at - record.started)))
        with anyio.move_on_after(window):
            while not self.answered(main, record.ids[0]):
                await anyio.sleep(0.05)

    @staticmethod
    def answered_after_ping(session: ClientSession, record: _CallRecord) -> bool:
        """Whether the cancelled call's answer arrived after the ping sent behind its cancel
        was answered (or with no ping answer to tell by, at all)."""
        answers = {e.id: e.seq for e in session.transcript
                   if e.direction == "recv" and e.kind in ("response", "error")}
        call = answers.get(record.ids[0])
        if call is None:
            return False
        ping = answers.get(record.ping_ids[0]) if record.ping_ids else None
        return ping is None or call > ping

    @staticmethod
    def answered(session: ClientSession, request_id: int) -> bool:
        return any(e.direction == "recv" and e.id == request_id
                   and e.kind in ("response", "error") for e in session.transcript)

    def judge_progress(self, main: ClientSession, records: list[_CallRecord],
                       foreign: list[dict[str, Any]]) -> None:
        def evidence_of(record: _CallRecord) -> list[dict[str, Any]]:
            token = record.ids[0] if record.ids else None
            return [_entry("main", e) for e in main.transcript
                    if (e.id == token and e.kind in ("request", "response", "error"))
                    or (e.method == "notifications/progress" and e.message
                        and (e.message.get("params") or {}).get("progressToken") == token)][:8]

        reporting = [r for r in records if r.progress]
        problems = []
        for record in reporting:
            values = record.progress
            if not all(is_number(v) for v in values):
                problems.append((record, _("{tool}: progress {values} not numbers").format(
                    tool=repr(record.tool), values=repr(values))))
            elif any(b <= a for a, b in itertools.pairwise(values)):
                problems.append((record, _("{tool}: progress {values} does not "
                                 "increase with each notification").format(
                                     tool=repr(record.tool), values=repr(values))))
        if foreign:
            problems.append((None, _("progress for token(s) "
                             "{tokens} that no "
                             "call of the checkup carried").format(
                                 tokens=sorted({repr(p.get("progressToken")) for p in foreign}))))
        if problems:
            evidence = [e for r, _ in problems if r is not None for e in evidence_of(r)]
            evidence += [{"session": "main", "finding": "progress-unknown-token", "message": p}
                         for p in foreign[:3]]
            self.put("tools.progress", "fail", "; ".join(p for _, p in problems), evidence)
        elif reporting:
            self.put("tools.progress", "pass", "; ".join(
                _("{tool}: {count} notification(s) under its token, increasing").format(
                    tool=repr(r.tool), count=len(r.progress))
                for r in reporting), [e for r in reporting for e in evidence_of(r)])
        else:
            self.skip(["tools.progress"], _("no allowed tool reported progress when called with "
                      "a progressToken"))
        cancelled = [r for r in records if r.cancelled_at is not None]
        if not cancelled:
            self.skip(["tools.cancellation"], _("no allowed call was still running (reporting "
                      "progress) to be cancelled"))
            return
        if main.era is Era.STATELESS and main.transport.kind != "stdio":
            # 2026-07-28 basic/patterns/cancellation: over Streamable HTTP "closing the SSE
            # response stream is the cancellation signal", and our client closes it; an
            # answer read before the close is the race the spec allows, and none can come
            # after it. There is no notification whose handling could be judged.
            self.skip(["tools.cancellation"], _("stateless era over Streamable HTTP: the client "
                      "cancels by closing the request's response stream, so no answer can "
                      "follow the cancel (nothing for the server to get wrong)"))
            return
        late = [r for r in cancelled if self.answered_after_ping(main, r)]
        crossed = [r for r in cancelled if r not in late and self.answered(main, r.ids[0])]
        if late and main.transport.kind != "stdio":
            # Over HTTP the call's answer comes on its own response stream and the ping's on
            # another; two streams keep no order between them, so an answer read after the
            # ping's may have been sent before the cancel arrived. Only stdio's one pipe
            # orders the two, and only there is a late answer evidence.
            self.skip(["tools.cancellation"], "; ".join(
                _("{tool} answered after a ping sent behind the cancel, but on another "
                "HTTP stream, which keeps no order with the ping's: whether it was sent after "
                "the cancel cannot be told").format(tool=repr(r.tool)) for r in late))
        elif late:
            self.put("tools.cancellation", "fail", "; ".join(
                _("{tool} answered after notifications/cancelled (and after a ping sent "
                "behind it was answered)").format(tool=repr(r.tool)) for r in late),
                [e for r in late for e in evidence_of(r)])
        elif crossed == cancelled:
            self.skip(["tools.cancellation"], "; ".join(
                _("{tool} answered before a ping sent behind the cancel was: the answer "
                "crossed the cancel on the wire, which the spec allows").format(
                    tool=repr(r.tool)) for r in crossed))
        else:
            self.put("tools.cancellation", "pass", "; ".join(
                _("{tool} cancelled at its second progress: no answer followed").format(
                    tool=repr(r.tool)) for r in cancelled if r not in crossed),
                [e for r in cancelled if r not in crossed for e in evidence_of(r)])
