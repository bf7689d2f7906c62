"""The checkup's checks of what only a handshake-era session can be asked.

Revision 2026-07-28 removed ``logging/setLevel`` and ``resources/subscribe``, and
batches left JSON-RPC's MCP with 2025-06-18, so these run on a session that
initialized (the main one, or the lifecycle's second one beside a stateless main
session), concurrently with the lifecycle checks: ``capabilities.logging`` (both
directions) and ``logging.invalid-level``, ``resources.subscribe``, and ``jsonrpc.batch`` (over
stdio only).  ``logging/setLevel`` is side-effect free by the spec, and the
session gets back the level it had set.

Example (what the lifecycle phase does with it)::

    await self.handshake_features(session, "handshake")
    self.results["jsonrpc.batch"].outcome   # 'pass': the batch was refused with an error
"""

from __future__ import annotations

import contextlib
import json

import anyio

from ..client import ClientSession
from ..client.errors import ServerError
from ..i18n import _
from ..protocol.errors import McpError
from ..protocol.log_levels import LOG_LEVELS
from .model import transcript_evidence as _entry
from .recorder import CheckupCore
from .uris import uri_problem

#: A level RFC 5424 does not have.
INVALID_LEVEL = "checkup-invalid-level"
#: A log message: the server may send it only when it declared logging.
LOG_NOTIFICATION = "notifications/message"
#: The batch sent over stdio: one ping, under an id the session's own counter never makes.
BATCH = json.dumps([{"jsonrpc": "2.0", "id": "checkup-batch", "method": "ping"}])
#: How long the batch's answer is awaited after the ping that follows it was answered.
BATCH_SETTLE = 0.1
#: Checks that need the handshake era (2026-07-28 removed what they exercise).
HANDSHAKE_FEATURE_CHECKS = ("capabilities.logging", "capabilities.logging-served",
                            "logging.invalid-level",
                            "resources.subscribe", "jsonrpc.batch")


class HandshakeFeatureChecks(CheckupCore):
    """capabilities.logging (both directions), logging.invalid-level, resources.subscribe and
    jsonrpc.batch."""

    async def handshake_features(self, session: ClientSession, name: str) -> None:
        """Every check here on ``session`` (named ``name`` in the evidence), concurrently."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.guarded, ("capabilities.logging", "logging."), self.logging,
                             session, name)
            group.start_soon(self.guarded, ("resources.subscribe",), self.subscribe, session,
                             name)
            group.start_soon(self.guarded, ("jsonrpc.batch",), self.batch, session, name)

    async def logging(self, session: ClientSession, name: str) -> None:
        check, served = "capabilities.logging", "capabilities.logging-served"
        logs = [_entry(name, e) for e in session.transcript
                if e.direction == "recv" and e.method == LOG_NOTIFICATION][:3]
        if "logging" not in session.capabilities.server:
            self.skip(["logging.invalid-level", served], _("the server does not declare logging"))
            answer, evidence = await self.exchange(session, name, "logging/setLevel",
                                                   {"level": "info"}, force=True)
            logs = [_entry(name, e) for e in session.transcript
                    if e.direction == "recv" and e.method == LOG_NOTIFICATION][:3]
            if logs:
                self.put(check, "fail", _("logging not declared, yet notifications/message "
                         "arrived"), logs + evidence)
            elif isinstance(answer, dict):
                self.put(check, "warn", _("logging not declared and no notifications/message "
                         "arrived, yet logging/setLevel answered a result"), evidence)
            elif isinstance(answer, ServerError) and answer.code == -32601:
                self.put(check, "pass", _("not declared, no notifications/message arrived, and "
                         "logging/setLevel refused with -32601"), evidence)
            else:
                self.put(check, "warn", _("not declared; logging/setLevel answered {answer} "
                         "(JSON-RPC's code for a method not available is -32601)").format(
                             answer=answer), evidence)
            return
        refused, evidence = [], []
        previous = [e.message["params"].get("level") for e in session.transcript
                    if e.direction == "send" and e.method == "logging/setLevel" and e.message
                    and isinstance(e.message.get("params"), dict)]
        # From the most severe down, so the session ends up hearing everything rather than
        # nothing; an open session gets back the level it had set, if it had.
        for level in reversed(LOG_LEVELS):
            answer, entries = await self.exchange(session, name, "logging/setLevel",
                                                  {"level": level})
            evidence += entries
            if not isinstance(answer, dict):
                refused.append(f"{level}: {answer}")
        self.put(check, "pass", _("declared: the notifications/message it sends "
                 "({count} so far) are declared").format(count=len(logs)), logs + evidence[:2])
        self.put(served, "fail" if refused else "pass",
                 _("declared, yet logging/setLevel refused {refused}").format(
                     refused="; ".join(refused)) if refused else
                 _("declared, and logging/setLevel accepted all {count} levels").format(
                     count=len(LOG_LEVELS)),
                 evidence)
        answer, evidence = await self.exchange(session, name, "logging/setLevel",
                                               {"level": INVALID_LEVEL})
        check = "logging.invalid-level"
        if isinstance(answer, ServerError) and answer.code == -32602:
            self.put(check, "pass", _("level {level} refused with -32602").format(
                level=repr(INVALID_LEVEL)), evidence)
        elif isinstance(answer, ServerError):
            self.put(check, "warn", _("level {level} refused with {code}, not "
                     "-32602").format(level=repr(INVALID_LEVEL), code=answer.code), evidence)
        else:
            self.put(check, "warn", _("level {level}: {answer}").format(
                level=repr(INVALID_LEVEL),
                answer=_("accepted") if isinstance(answer, dict) else answer), evidence)
        if previous and previous[-1] in LOG_LEVELS:
            await self.exchange(session, name, "logging/setLevel", {"level": previous[-1]})

    async def subscribe(self, session: ClientSession, name: str) -> None:
        check = "resources.subscribe"
        declared = session.capabilities.server.get("resources")
        if not (isinstance(declared, dict) and declared.get("subscribe") is True):
            self.skip([check], _("the server does not declare resources.subscribe"))
            return
        answer, _entries = await self.exchange(session, name, "resources/list")
        uris = [r.get("uri") for r in (answer.get("resources") or [] if isinstance(answer, dict)
                                       else []) if isinstance(r, dict)]
        uri = next((u for u in uris if isinstance(u, str) and uri_problem(u) is None), None)
        if uri is None:
            self.skip([check], _("no listed resource with a valid URI to subscribe to"))
            return
        subscribed, evidence = await self.exchange(session, name, "resources/subscribe",
                                                   {"uri": uri})
        ended, entries = await self.exchange(session, name, "resources/unsubscribe",
                                             {"uri": uri})
        evidence += entries
        problems = [f"resources/{method} {uri}: {answer}" for method, answer in
                    (("subscribe", subscribed), ("unsubscribe", ended))
                    if not isinstance(answer, dict)]
        self.put(check, "fail" if problems else "pass",
                 "; ".join(problems) or _("subscribed to {uri} and unsubscribed").format(
                     uri=uri), evidence)

    async def batch(self, session: ClientSession, name: str) -> None:
        check = "jsonrpc.batch"
        if session.transport.kind != "stdio":
            over = {"streamable-http": "Streamable HTTP", "sse": _("legacy HTTP+SSE")}.get(
                session.transport.kind, session.transport.kind)
            self.skip([check], _("not stdio: the session speaks {over}, where a POSTed batch "
                      "is the transport's rule (not checked here)").format(over=over))
            return
        version = session.negotiated_version or ""
        if version < "2025-06-18":
            self.skip([check], _("negotiated {version}: batches were allowed before "
                      "2025-06-18").format(version=version))
            return
        start = session.transcript.next_seq

        async def send_batch() -> None:
            with contextlib.suppress(McpError):  # judged from the transcript
                await session.send_raw(BATCH, timeout=self.timeout)

        async with anyio.create_task_group() as group:
            group.start_soon(send_batch)
            # The ping after the batch marks "the server has read past it": whatever it says
            # to the batch has been said a moment after the ping's answer.
            await anyio.sleep(0)
            await self.exchange(session, name, "ping")
            await anyio.sleep(BATCH_SETTLE)
            group.cancel_scope.cancel()
        # The batch sent, and what came back that answers no request of ours: the array
        # (recorded as an invalid frame) or an error whose id is null or the batch's.
        relevant = [e for e in session.transcript.since(start)
                    if (e.direction == "send" and e.kind == "batch")
                    or (e.direction == "recv" and (e.kind == "invalid" or (
                        e.kind == "error" and e.id in (None, "checkup-batch"))))]
        evidence = [{**_entry(name, e), "text": e.text} if e.message is None
                    else _entry(name, e) for e in relevant]
        arrays = [f for f in session.findings if f.rule.id == "batch-not-allowed"
                  and f.side == "server"]
        if arrays:
            self.put(check, "fail", _("a batch sent at {version} was answered with a JSON array "
                     "(not an MCP message since 2025-06-18)").format(version=version), evidence)
            return
        codes = [e["message"]["error"].get("code") for e in evidence
                 if e["message"] and isinstance(e["message"].get("error"), dict)]
        self.put(check, "pass", _("the batch was refused with error {code}").format(code=codes[0])
                 if codes else _("the batch was not answered"), evidence)
