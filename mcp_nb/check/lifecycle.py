"""The checkup's lifecycle phase: the handshake, the version negotiation, ping, and shutdown.

These checks need the handshake: they use the main session when it speaks it,
else a second session that initializes (a stateless-only server makes them not
applicable).  Concurrently, a session of its own offers a version that predates
MCP and stays short of ``notifications/initialized`` for a moment, where a server
that sends requests too early is seen doing it; and what only a handshake-era
session can be asked (:mod:`~mcp_nb.check.handshake_features`) runs on the
handshake session.  ``lifecycle.shutdown`` is judged after every session closed.

Example (what the runner does with it)::

    group.start_soon(self.lifecycle, main, connect_error)   # beside the other phases
    ...
    self.shutdown()                                          # once every session is closed
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio

from ..client import ClientSession
from ..i18n import _
from ..protocol.errors import McpError, UnsupportedVersionError
from ..protocol.versions import SUPPORTED_VERSIONS, VERSIONS, Era
from .guard import now
from .handshake_features import HANDSHAKE_FEATURE_CHECKS, HandshakeFeatureChecks
from .recorder import exchange_entries
from .sessions import SHUTDOWN_GRACE, is_url

#: Offered to see the server counter-offer: it predates MCP, so no server supports it.
UNKNOWN_VERSION = "2000-01-01"
#: How long the unknown-version session waits, initialized but without sending
#: notifications/initialized, for requests a server should not send yet.
EARLY_REQUEST_WINDOW = 0.3


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _initialize_exchange(session: ClientSession, name: str) -> tuple[dict | None, list[dict]]:
    """The initialize request and its answer (the raw response message) from the transcript."""
    sent = [e for e in session.transcript if e.direction == "send" and e.method == "initialize"]
    if not sent:
        return None, []
    ids = [e.id for e in sent if isinstance(e.id, int)]
    evidence = exchange_entries(session, name, ids)
    answers = [e["message"] for e in evidence if e["message"] and "id" in e["message"]
               and "method" not in e["message"]]
    return (answers[-1] if answers else None), evidence


def _version_known_or_future(answered: str) -> bool:
    return answered in VERSIONS or (bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", answered))
                                    and answered > SUPPORTED_VERSIONS[-1])


class LifecycleChecks(HandshakeFeatureChecks):
    """lifecycle.*: initialize-result, version-answer, unknown-version, ping,
    requests-before-initialized and shutdown (with the handshake-era features beside)."""

    async def lifecycle(self, main: ClientSession, connect_error: Exception | None) -> None:
        # A session's task group lives in the task that opened it: each session this check
        # opens is entered and left here (its transcript and findings stay readable after).
        handshake_checks = ["lifecycle.initialize-result", "lifecycle.initialize-result-types",
                            "lifecycle.version-answer",
                            "lifecycle.unknown-version", "lifecycle.ping",
                            "lifecycle.requests-before-initialized", *HANDSHAKE_FEATURE_CHECKS]
        if connect_error is not None or main.era is not Era.STATELESS:
            await self.handshake_lifecycle(main, "main", connect_error)
            return
        if self.new_session is None:
            self.skip(handshake_checks,
                      _("the open session speaks the stateless era (no handshake, no ping)"))
            return
        # The unknown-version session needs no other session: it starts beside the
        # handshake session instead of after its handshake (one server start less to wait).
        async with anyio.create_task_group() as group:
            group.start_soon(self.guarded, ("lifecycle.unknown-version",), self.unknown_version)
            session, connect_error, refused = await self.handshake_session()
        if refused is not None:
            # Stateless-only: what the unknown-version session saw is not judged.
            self.sessions[:] = [(n, s) for n, s in self.sessions if n != "unknown-version"]
            self.results.pop("lifecycle.unknown-version", None)
            self.skip(handshake_checks, refused)
        elif connect_error is None and session.era is Era.HANDSHAKE:
            self.early_requests()

    async def handshake_session(self) -> tuple[ClientSession, Exception | None, str | None]:
        """A second session, for the handshake checks beside a stateless-era main session:
        the session, its connection error, and why the checks do not apply (if they don't)."""
        assert self.new_session is not None
        session = self.new_session()
        self.sessions.append(("handshake", session))
        connect_error: Exception | None = None
        judged = False
        try:
            async with session:
                try:
                    await session.connect(era="handshake")
                except McpError as exc:
                    answer = _initialize_exchange(session, "handshake")[0]
                    if not isinstance((answer or {}).get("result"), dict):
                        # The server spoke 2026-07-28 to the main session and refuses the
                        # handshake: stateless-only. How it refuses is its own choice (stdio:
                        # an implementation-defined error; HTTP: 400 for the missing headers).
                        return session, exc, _(
                            "the server speaks only the stateless era (initialize refused: "
                            "{error}): no handshake, no ping").format(error=_first_line(exc))
                    connect_error = exc
                judged = True
                await self.handshake_lifecycle(session, "handshake", connect_error,
                                               beside_unknown_version=False)
        except McpError as exc:
            # The session could not even start: what it saw is judged (once; an error while
            # closing a session already judged changes nothing).
            if not judged:
                connect_error = exc
                await self.handshake_lifecycle(session, "handshake", exc,
                                               beside_unknown_version=False)
        return session, connect_error, None

    async def handshake_lifecycle(self, session: ClientSession, name: str,
                                  connect_error: Exception | None, *,
                                  beside_unknown_version: bool = True) -> None:
        async with anyio.create_task_group() as group:
            if beside_unknown_version:
                group.start_soon(self.guarded, ("lifecycle.unknown-version",), self.unknown_version)
            await self.guarded(("lifecycle.initialize-result", "lifecycle.version-answer"),
                               now, lambda: self.handshake(session, name, connect_error))
            if connect_error is None and session.era is Era.HANDSHAKE:
                group.start_soon(self.guarded, HANDSHAKE_FEATURE_CHECKS,
                                 self.handshake_features, session, name)
            else:
                self.skip(HANDSHAKE_FEATURE_CHECKS, _(
                    "no handshake-era session to use: {error}").format(error=connect_error))
            if connect_error is None and session.era is Era.HANDSHAKE:
                await self.guarded(("lifecycle.ping",), self.ping, session, name)
        if beside_unknown_version and connect_error is None and session.era is Era.HANDSHAKE:
            await self.guarded(("lifecycle.requests-before-initialized",), now,
                               self.early_requests)

    async def ping(self, session: ClientSession, name: str) -> None:
        """lifecycle.ping: an empty result, promptly."""
        answer, evidence = await self.exchange(session, name, "ping")
        if isinstance(answer, dict) and not {k for k in answer if k != "_meta"}:
            self.put("lifecycle.ping", "pass", _("ping answered with an empty result"), evidence)
        elif isinstance(answer, dict):
            self.put("lifecycle.ping", "fail", _(
                "ping answered with a non-empty result (keys {keys})").format(
                keys=sorted(answer)), evidence)
        else:
            self.put("lifecycle.ping", "fail",
                     _("ping not answered: {answer}").format(answer=answer), evidence)

    def early_requests(self) -> None:
        """lifecycle.requests-before-initialized, once the unknown-version session closed."""
        # The unknown-version session never sends initialized: premature requests show there.
        early = [(n, f) for n, s in self.sessions for f in s.findings
                 if f.rule.id == "server-request-before-initialized"]
        waited = [(n, s) for n, s in self.sessions if n == "unknown-version" and isinstance(
            (_initialize_exchange(s, n)[0] or {}).get("result"), dict)]
        if not early and not waited:
            self.skip(["lifecycle.requests-before-initialized"], _(
                "no session stayed initialized short of notifications/initialized (the "
                "unknown version's session got no initialize result): no window to watch"))
            return
        self.put("lifecycle.requests-before-initialized", "fail" if early else "pass",
                 early[0][1].detail if early else
                 _("no request came before notifications/initialized"),
                 [{"session": n, "finding": f.rule.id, "message": f.evidence}
                  for n, f in early[:5]])

    def handshake(self, session: ClientSession, name: str, error: Exception | None) -> None:
        """initialize-result (and its types) and version-answer, from the initialize exchange
        in the transcript."""
        answer, evidence = _initialize_exchange(session, name)
        if not isinstance((answer or {}).get("result"), dict):
            self.skip(["lifecycle.initialize-result-types"],
                      _("no initialize result to judge the types of"))
        if answer is None:
            self.put("lifecycle.initialize-result", "fail",
                     _("initialize was not answered: {error}").format(error=error), evidence)
            return
        result = answer.get("result")
        if not isinstance(result, dict):
            detail = _("initialize answered an error: {error}").format(
                error=json.dumps(answer.get("error"))[:300])
            # Refusing the version the client offered (its latest) is the negotiation's failure.
            check = ("lifecycle.version-answer" if isinstance(error, UnsupportedVersionError)
                     else "lifecycle.initialize-result")
            self.put(check, "fail", detail, evidence)
            return
        # The sentence asks for the capabilities and the information to be there; their
        # types are the schema's (lifecycle.initialize-result-types, which only warns).
        missing = [key for key in ("capabilities", "serverInfo") if key not in result]
        self.put("lifecycle.initialize-result", "fail" if missing else "pass", _(
            "the result carries no {keys}").format(keys=", ".join(missing)) if missing else
            _("the result carries capabilities and serverInfo"), evidence)
        problems = []
        info = result.get("serverInfo")
        if not isinstance(result.get("protocolVersion"), str):
            problems.append(_("protocolVersion is not a string"))
        if "capabilities" in result and not isinstance(result["capabilities"], dict):
            problems.append(_("capabilities is not an object"))
        if "serverInfo" in result and not isinstance(info, dict):
            problems.append(_("serverInfo is not an object"))
        elif isinstance(info, dict):
            problems += [_("serverInfo.{key} is not a string").format(key=key)
                         for key in ("name", "version") if not isinstance(info.get(key), str)]
        self.put("lifecycle.initialize-result-types", "fail" if problems else "pass",
                 "; ".join(problems) or _("protocolVersion, capabilities and serverInfo "
                                          "typed as the schema says"), evidence)
        answered = result.get("protocolVersion")
        offered = next((e["message"]["params"].get("protocolVersion") for e in evidence
                        if e["message"] and e["message"].get("method") == "initialize"), None)
        if not isinstance(answered, str):
            self.put("lifecycle.version-answer", "fail", _("no protocolVersion answered"),
                     evidence)
        elif answered == offered or answered in VERSIONS:
            self.put("lifecycle.version-answer", "pass",
                     _("offered {offered}, answered {answered}").format(
                         offered=offered, answered=answered), evidence)
        elif _version_known_or_future(answered):
            self.put("lifecycle.version-answer", "warn", _(
                "offered {offered}, answered {answered}: a version this checkup does not "
                "know").format(offered=offered, answered=answered), evidence)
        else:
            self.put("lifecycle.version-answer", "fail", _(
                "offered {offered}, answered {answered}: no MCP revision has that "
                "name").format(offered=offered, answered=answered), evidence)

    async def unknown_version(self) -> None:
        check = "lifecycle.unknown-version"
        if self.new_session is None:
            self.skip([check], _("needs a new connection (the target is an open session)"))
            return
        name = "unknown-version"
        error: Exception | None = None
        session = self.new_session()
        self.sessions.append((name, session))
        try:
            async with session:
                await session.initialize(UNKNOWN_VERSION)
                # This session stays short of initialized for a moment, so a server that
                # sends requests before notifications/initialized is seen doing it.
                await anyio.sleep(EARLY_REQUEST_WINDOW)
        except McpError as exc:
            error = exc
        answer, evidence = _initialize_exchange(session, name)
        result = (answer or {}).get("result")
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            answered = result["protocolVersion"]
            if answered == UNKNOWN_VERSION:
                self.put(check, "fail", _("offered {version} (predates MCP), the server "
                                          "echoed it back").format(version=UNKNOWN_VERSION),
                         evidence)
            else:
                self.put(check, "pass", _("offered {version}, counter-offered {answered}")
                         .format(version=UNKNOWN_VERSION, answered=answered), evidence)
        elif answer is not None and isinstance(answer.get("error"), dict):
            code = answer["error"].get("code")
            if code == -32022:
                self.skip([check], _("initialize refused with -32022: a stateless-era server"))
                return
            self.put(check, "fail", _("offered {version}: answered error {code} instead of a "
                                      "version it supports").format(version=UNKNOWN_VERSION,
                                                                    code=code), evidence)
        else:
            self.put(check, "fail", _("offered {version}: no answer ({error})").format(
                version=UNKNOWN_VERSION, error=error), evidence)

    def shutdown(self) -> None:
        """lifecycle.shutdown, from how each stdio server the checkup closed took it."""
        check = "lifecycle.shutdown"
        if is_url(self.target):
            self.skip([check], _("HTTP: shutdown is closing the connections (no process to "
                                 "watch)"))
            return
        closed = [(name, session) for name, session in self.sessions
                  if session is not self.target and session.transport.kind == "stdio"
                  and any(e.kind == "stdin closed" for e in session.transport_events)]
        if not closed:
            self.skip([check], _("no stdio server was left running for the checkup to close "
                      "(an open session is yours to close)"))
            return

        def evidence(name: str, session: ClientSession) -> list[dict[str, Any]]:
            return [{"session": name, "finding": f"transport: {e.kind}",
                     "message": {"event": e.kind, "detail": e.detail, **e.data}}
                    for e in session.transport_events
                    if e.kind in ("stdin closed", "SIGTERM", "SIGKILL", "exited")]

        def steps(session: ClientSession) -> str:
            """What the transport did and saw after closing stdin, in its own words."""
            return "; ".join(e.detail for e in session.transport_events
                             if e.kind in ("SIGTERM", "SIGKILL", "exited"))

        stubborn = [(n, s) for n, s in closed if any(e.kind == "SIGTERM"
                                                     for e in s.transport_events)]
        if stubborn:
            name, session = stubborn[0]
            self.put(check, "fail", _(
                "{stubborn} of {closed} server(s) did not exit within {grace} s of their stdin "
                "closing ({name}: {steps})").format(
                stubborn=len(stubborn), closed=len(closed), grace=f"{SHUTDOWN_GRACE:g}",
                name=name, steps=steps(session)), evidence(name, session))
        else:
            self.put(check, "pass", _(
                "{closed} server(s) exited after their stdin closed ({steps})").format(
                closed=len(closed), steps="; ".join(f"{n}: {steps(s)}" for n, s in closed[:3])),
                [e for n, s in closed[:2] for e in evidence(n, s)])
