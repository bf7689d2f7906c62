"""How a session began and what it settled: the handshake's messages, then the
capabilities and the protocol version (in the stateless era: ``server/discover``)."""

from __future__ import annotations

import ipywidgets as w

from ..client.session import ClientSession
from ..client.transcript import TranscriptEntry
from ..i18n import _
from ..protocol.versions import Era
from . import diagrams, render
from .snapshots import NowLine, _SnapshotOnDisplay


def _discover_entries(session: ClientSession) -> tuple[TranscriptEntry | None, ...]:
    """The ``server/discover`` exchange that settled a stateless session (the last one)."""
    request = response = None
    for entry in session.transcript.entries:
        if entry.direction == "send" and entry.method == "server/discover":
            request, response = entry, None
        elif (entry.direction == "recv" and request is not None and entry.id == request.id
              and response is None):
            response = entry
            if session.era is Era.STATELESS:
                break
    return request, response


def _handshake_entries(session: ClientSession) -> tuple[TranscriptEntry | None, ...]:
    request = response = initialized = None
    for entry in session.transcript.entries:
        if entry.direction == "send" and entry.method == "initialize" and request is None:
            request = entry
        elif (entry.direction == "recv" and request is not None and entry.id == request.id
              and response is None):
            response = entry
        elif entry.method == "notifications/initialized" and entry.direction == "send":
            initialized = entry
            break
    return request, response, initialized


class Handshake(_SnapshotOnDisplay, w.VBox):
    """The three handshake messages as cards, and their sequence diagram with timings."""

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._cards = w.HTML()
        self._sequence = w.HTML()
        self._sequence_alt = _("sequence: nothing yet")
        self._shown: list[TranscriptEntry] = []
        self.children = [self._sequence, self._cards]
        self._unsubscribe = session.transcript.subscribe(self._on_entry)
        self._redraw()

    def _on_entry(self, entry: TranscriptEntry) -> None:
        if entry.direction != "event":
            self._redraw()

    def _redraw(self) -> None:
        if self._session.era is Era.STATELESS:
            self._redraw_discover()
            return
        request, response, initialized = _handshake_entries(self._session)
        if initialized is not None:
            # The handshake is over: stop listening, so later messages cost it nothing.
            self._unsubscribe()
            self._unsubscribe = lambda: None
        titles = (_("1. initialize (client → server)"), _("2. initialize result (server → client)"),
                  _("3. notifications/initialized (client → server)"))
        self._cards.value = render.STYLE + '<div class="mcpnb">' + "".join(
            render.message_card_html(title, entry)
            for title, entry in zip(titles, (request, response, initialized), strict=True)
        ) + "</div>"
        present = [e for e in (request, response, initialized) if e is not None]
        self._sequence.value = diagrams.sequence_svg(present)
        self._shown = present
        self._sequence_alt = _("sequence: ") + " → ".join(e.label for e in present)

    def _redraw_discover(self) -> None:
        """Stateless era: no handshake; the discover exchange is what the session began with."""
        request, response = _discover_entries(self._session)
        self._unsubscribe()
        self._unsubscribe = lambda: None
        titles = (_("1. server/discover (client → server)"),
                  _("2. discover result (server → client)"))
        self._cards.value = render.STYLE + '<div class="mcpnb"><p>' + render.esc(_(
            "The stateless era has no handshake: this is the optional server/discover "
            "exchange.")) + "</p>" + "".join(
            render.message_card_html(title, entry, ("supportedVersions", "capabilities"))
            for title, entry in zip(titles, (request, response), strict=True)) + "</div>"
        present = [e for e in (request, response) if e is not None]
        self._sequence.value = diagrams.sequence_svg(present)
        self._shown = present
        self._sequence_alt = _("sequence: ") + " → ".join(e.label for e in present)

    def describe(self) -> str:
        if self._session.era is Era.STATELESS:
            request, response = _discover_entries(self._session)
            versions = (self._session.discover_result.supportedVersions
                        if self._session.discover_result else [])
            return _("Discover: server/discover #{id} → supported {versions} (no "
                     "handshake)").format(id=request.id if request else "?",
                                          versions=", ".join(versions) or _("nothing"))
        request, response, initialized = _handshake_entries(self._session)
        if request is None:
            return _("Handshake: not started")
        steps = [f"initialize #{request.id}"]
        if response is not None:
            version = (response.message or {}).get("result", {}).get("protocolVersion")
            steps.append(f"result ({version})" if version else f"{response.kind}")
        if initialized is not None:
            steps.append("initialized")
        return "Handshake: " + " → ".join(steps)

    def frozen(self) -> w.VBox:
        return w.VBox([w.HTML(self._sequence.value), w.HTML(self._cards.value)])

    def static_html(self) -> str:
        return (render.svg_image_html(diagrams.sequence_svg(self._shown, times=False),
                                      self._sequence_alt) + self._cards.value)


class CapabilitiesView(_SnapshotOnDisplay, w.HTML):
    """Who declared what, what is usable now, and how the version was settled."""

    def __init__(self, session: ClientSession, now: NowLine | None = None) -> None:
        super().__init__()
        self._session = session
        self._now = now
        self._redraw()
        session.on_transition(lambda record: self._redraw())

    def _redraw(self) -> None:
        s = self._session
        preface = (render.discover_preface_html(s.discover_result, s.stateless_version)
                   if s.era is Era.STATELESS else None)
        self.value = render.capabilities_html(s.capabilities, s.version_outcome, s.state,
                                              preface=preface)

    def describe(self) -> str:
        s = self._session
        server = render.declared_text(s.capabilities.server) or _("none yet")
        client = render.declared_text(s.capabilities.client) or _("none")
        if s.era is Era.STATELESS:
            return _("Capabilities (server/discover): server [{server}]; client [{client}] "
                     "sent on every request; version {version} per request").format(
                server=server, client=client, version=s.stateless_version)
        version = (f"{s.version_outcome.answered} ({s.version_outcome.outcome})"
                   if s.version_outcome else _("not negotiated"))
        return _("Capabilities: server [{server}]; client [{client}]; version {version}").format(
            server=server, client=client, version=version)

    def frozen(self) -> w.HTML:
        return w.HTML(self.value)

    def static_html(self) -> str:
        return self.value
