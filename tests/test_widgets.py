"""Widgets through their models and renderers: drawn from the core's data, escaped, live."""

from __future__ import annotations

import re
import time

import anyio
import pytest
from support import lab_session, svg_images_opened

from mcp_nb.client import ClientSession, lab_command
from mcp_nb.notebook import diagrams, render
from mcp_nb.notebook.handshake_views import CapabilitiesView, Handshake
from mcp_nb.notebook.lifecycle_view import StateDiagram
from mcp_nb.notebook.request_views import ToolResultView
from mcp_nb.notebook.transcript_view import TranscriptView
from mcp_nb.notebook.widgets import SessionView
from mcp_nb.protocol import TRANSITIONS, State
from mcp_nb.protocol.models import CallToolResult
from mcp_nb.transports import StdioTransport


def unopened() -> ClientSession:
    return ClientSession(StdioTransport(lab_command()))


def test_state_diagram_draws_every_handshake_transition_of_the_table() -> None:
    svg = diagrams.state_diagram_svg(State.UNINITIALIZED, [State.UNINITIALIZED])
    handshake = [t for t in TRANSITIONS if t.era != "stateless"]
    assert svg.count("<line ") == len(handshake) == len(TRANSITIONS) - 1
    for transition in handshake:
        assert f"{transition.source.value} → {transition.target.value}" in svg
    # The stateless shortcut is not drawn: the handshake era's view is unchanged.
    assert "stateless era" not in svg
    states = re.findall(r'data-state="([A-Za-z]+)"', svg)
    assert states == [s.value for s in State]
    assert re.search(r'class="state current" data-state="Uninitialized"', svg)


def test_state_diagram_marks_the_path_taken() -> None:
    path = [State.UNINITIALIZED, State.INITIALIZING, State.SHUTTING_DOWN, State.TERMINATED]
    svg = diagrams.state_diagram_svg(State.TERMINATED, path)
    assert svg.count('stroke-width="3"') == 3  # three edges walked
    assert 'class="state current" data-state="Terminated"' in svg


def test_escaping_neutralises_markup_quotes_and_direction_overrides() -> None:
    hostile = '<script>alert(1)</script> "q" \'s\' & \u202e\x00'
    escaped = render.esc(hostile)
    assert "<" not in escaped and '"' not in escaped and "'" not in escaped
    assert "\u202e" not in escaped and "\x00" not in escaped
    assert "\\u202e" in escaped and "&amp;" in escaped
    assert render.esc("line\nbreak\ttab") == "line\nbreak\ttab"


def test_tool_output_images_only_inline_raster_types() -> None:
    blocks = [
        {"type": "text", "text": "<b>x</b>"},
        {"type": "image", "mimeType": "image/png", "data": "iVBOR\"><script>"},
        {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
        {"type": "resource", "resource": {"uri": "lab://<x>", "text": "<y>"}},
    ]
    html = render.content_blocks_html(blocks, is_error=True)
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert 'src="data:image/png;base64,iVBORscript"' in html  # stray characters dropped
    assert "image/svg+xml" in html and "data:image/svg" not in html  # shown as JSON only
    assert "lab://&lt;x&gt;" in html and "isError: true" in html
    view = ToolResultView(CallToolResult(content=blocks, isError=True))
    assert repr(view) == (
        "ToolResult (error): <b>x</b>\n[image image/png, 11 bytes]\n[image image/svg+xml, …")


def test_results_without_text_still_say_what_they_are() -> None:
    image = CallToolResult(content=[{"type": "image", "mimeType": "image/png",
                                     "data": "iVBORw0KGgo="}])
    assert repr(ToolResultView(image)) == "ToolResult (ok): [image image/png, 8 bytes]"
    empty = CallToolResult(content=[])
    assert repr(ToolResultView(empty)) == "ToolResult (ok): (empty result)"
    assert "(empty result)" in render.content_blocks_html([])


def test_transcript_view_pages_ten_thousand_entries() -> None:
    session = unopened()
    for index in range(10_000):
        session.transcript.add(index / 1000, "send" if index % 2 else "recv", "request",
                               "Operating", size=40, method=f"m/{index % 7}", id=index,
                               message={"jsonrpc": "2.0", "id": index, "method": "x"})
    view = TranscriptView(session, page_size=50)
    view.flush()
    assert view.position.value == "page 200/200 · 10000 entries"
    assert view.table.value.count("<tr>") == 51  # header + one page
    started = time.perf_counter()
    view._turn(-1)
    assert view.position.value == "page 199/200 · 10000 entries"
    view.method.value = "m/3"
    assert view.position.value.endswith("1429 entries")
    view.direction.value = "send"
    assert repr(view) == ("Transcript: 715 of 10000 messages shown "
                          "(filtered by direction send and method m/3…)")
    # Rendering a page must not grow with the transcript: it stays one page of HTML.
    assert len(view.table.value) < 60_000
    assert time.perf_counter() - started < 30  # sanity bound only, not a benchmark


@pytest.mark.anyio
async def test_views_move_live_through_the_lifecycle_and_a_crash() -> None:
    transport = StdioTransport(lab_command("--crash-after", "4"))
    session = ClientSession(transport)
    view = SessionView(session, "crashy")
    diagram, handshake, capabilities = view.state_diagram, view.handshake, view.capabilities
    assert repr(diagram) == "StateDiagram: Uninitialized (path: Uninitialized)"
    assert repr(handshake) == "Handshake: not started"
    async with session:
        await session.initialize()
        assert 'class="state current" data-state="Initialized"' in diagram.value
        assert repr(handshake) == "Handshake: initialize #1 → result (2025-11-25)"
        await session.send_initialized()
        assert repr(handshake) == "Handshake: initialize #1 → result (2025-11-25) → initialized"
        assert "protocolVersion" in handshake.static_html()
        assert 'class="hl"' in handshake.static_html()
        assert "agreed" in capabilities.value
        await session.ping()
        with pytest.raises(Exception, match="exit code 3"):
            await session.ping()
        assert 'class="state current" data-state="Terminated"' in diagram.value
    assert repr(diagram).startswith("StateDiagram: Terminated (path: Uninitialized")
    # initialize, its result, initialized, ping, its result, and the ping the server died on
    assert repr(view) == "McpSession 'crashy': Terminated, 2025-11-25, 6 messages, 0 findings"
    bundle = diagram._repr_mimebundle_()
    assert bundle["text/plain"] == repr(diagram)
    # Saved as an image, which sanitizers keep (an untrusted notebook strips inline SVG).
    assert bundle["text/html"].startswith('<img alt="StateDiagram: Terminated (path: ')
    assert svg_images_opened(bundle["text/html"]).startswith("<svg")


@pytest.mark.anyio
async def test_transcript_and_capabilities_update_while_the_session_runs() -> None:
    async with lab_session(connect=False) as session:
        transcript = TranscriptView(session)
        capabilities = CapabilitiesView(session)
        assert "not negotiated" in repr(capabilities)
        await session.connect()
        await session.call_tool("echo", {"text": "live"})
        with anyio.fail_after(5):
            while "tools/call" not in transcript.table.value:
                await anyio.sleep(0.05)  # the throttled redraw happens by itself
        assert repr(capabilities).startswith(
            "Capabilities: server [completions, logging, prompts, resources, tools]")
        assert "usable now" in capabilities.value


def test_static_html_of_the_handshake_escapes_server_text() -> None:
    session = unopened()
    session.transcript.add(0.0, "send", "request", "Initializing", method="initialize", id=1,
                           message={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    session.transcript.add(0.01, "recv", "response", "Initializing", method="initialize", id=1,
                           message={"jsonrpc": "2.0", "id": 1, "result": {
                               "protocolVersion": "2025-11-25",
                               "instructions": "<img src=x onerror=alert(1)>"}})
    html = svg_images_opened(Handshake(session).static_html())
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert svg_images_opened(StateDiagram(session).static_html()).startswith("<svg")


def test_saved_transcript_snapshots_leave_out_what_timing_decides() -> None:
    # stderr lines race the messages on their own pipe: the live table shows them,
    # the snapshot saved into a notebook (and compared by nbval) does not.
    session = unopened()
    session.transcript.add(0.0, "event", "spawned", "Uninitialized", text="pid 1: server")
    session.transcript.add(0.1, "send", "request", "Initializing", method="initialize", id=1,
                           message={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    session.transcript.add(0.2, "event", "stderr", "Initializing", text="server: hello")
    session.transcript.add(0.3, "event", "finding", "Initializing", text="x", note="invalid-json")
    view = TranscriptView(session)
    view.flush()
    assert "server: hello" in view.table.value and "<th>#</th>" in view.table.value
    snapshot = view.static_html()
    assert "server: hello" not in snapshot and "pid 1" not in snapshot
    assert "initialize" in snapshot and "invalid-json" in snapshot
    assert "<th>#</th>" not in snapshot  # positions shift with every stderr line
    assert repr(view) == "Transcript: 1 messages (1 sent, 0 received)"


def test_a_filtered_transcript_says_so_in_its_text(mcp) -> None:
    mcp("connect filtered")
    mcp("call echo text=a")
    everything = mcp("transcript")
    # The handshake (3), tools/list and tools/call (2 each), the lab's log line for the call.
    assert repr(everything) == "Transcript: 8 messages (4 sent, 4 received)"
    calls = mcp("transcript --method tools/call")
    assert repr(calls) == ("Transcript: 2 of 8 messages shown "
                           "(filtered by method tools/call…)")
    received = mcp("transcript --direction recv --method tools/")
    assert repr(received) == ("Transcript: 2 of 8 messages shown "
                              "(filtered by direction recv and method tools/…)")


def test_the_saved_sequence_image_does_not_change_with_timing() -> None:
    """Saved outputs are compared by strict nbval, and a base64 image cannot be masked:
    the static sequence leaves the times out, the live one shows them."""
    from mcp_nb.client.transcript import TranscriptEntry

    def handshake(delay: float) -> list[TranscriptEntry]:
        return [TranscriptEntry(seq=0, time=0.001, direction="send", kind="request",
                                state="Initializing", method="initialize", id=1),
                TranscriptEntry(seq=1, time=0.001 + delay, direction="recv", kind="response",
                                state="Initializing", id=1)]

    fast, slow = handshake(0.002), handshake(0.250)
    assert (diagrams.sequence_svg(fast, times=False)
            == diagrams.sequence_svg(slow, times=False))
    assert diagrams.sequence_svg(fast) != diagrams.sequence_svg(slow)
    assert "0.251s" in diagrams.sequence_svg(slow)


def test_table_cells_keep_words_whole_and_let_long_urls_break() -> None:
    from mcp_nb.notebook import render

    url = "https://auth.example.com/.well-known/oauth-authorization-server/tenant"
    html = render.table_html(("step", "value"), [("spawned", url), ("challenge", "a b")])
    assert "<td>spawned</td>" in html and "<td>challenge</td>" in html
    assert f'<td class="long">{url}</td>' in html
    # Words wrap only between words; only such long unbroken values (and code) anywhere.
    assert "div.mcpnb table td { overflow-wrap: break-word; }" in render.STYLE
    assert "td.long, div.mcpnb table td code { overflow-wrap: anywhere; }" in render.STYLE


def test_a_refusal_note_in_the_authorization_picture_wraps_instead_of_running_off_it() -> None:
    from types import SimpleNamespace

    from mcp_nb.notebook import diagrams

    rule = ("RFC 8414 §3.3: the issuer in the metadata must be identical to the issuer "
            "identifier the well-known URL was built from")
    step = SimpleNamespace(name="server metadata", outcome="refused", rule=rule, sent="",
                           received="")
    svg = diagrams.auth_sequence_svg([step])
    lines = re.findall(r"<tspan [^>]*>([^<]*)</tspan>", svg)
    assert len(lines) == 3 and all(len(line) <= diagrams.NOTE_LINE_CHARS for line in lines)
    assert " ".join(lines) == f"✗ server metadata refused: {rule}"
