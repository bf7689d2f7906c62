"""Run All must not make early views contradict their prose (issue 25), in a real ipykernel.

A cell that shows the session or one of its parts illustrates one step; the
widget it shows is a snapshot of that step, with one live ``now: <state>`` line
under it.  ``%mcp view`` is the live window, and tabs made for acting (Explore)
stay live inside a snapshot, and so does a running call's progress.

The kernel is driven through jupyter_client, and its widgets are read the way a
front end sees them: from the comm messages on iopub (``comm_open`` with the
model's state, ``comm_msg`` updates), applied in order.  So "frozen" means "no
update ever reached the browser", not "a Python attribute did not change".
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel
from support import lab_session

from mcp_nb.notebook.transcript_view import TranscriptView
from mcp_nb.notebook.widgets import SessionView

TIMEOUT = 60
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LAB = f"{sys.executable} -m mcp_nb.lab"


def _current_state(html: str) -> str | None:
    """The state a diagram highlights as current."""
    found = re.search(r'class="state current" data-state="(\w+)"', html)
    return found.group(1) if found else None


def _usable(html: str) -> int:
    """How many capabilities the table marks "usable now" (its fourth column)."""
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in html.split("<tr>")]
    return sum(1 for cells in rows if len(cells) >= 4 and 'class="yes"' in cells[3])


def _tree(fe: FrontEnd, model_id: str) -> set[str]:
    """A model and every model under it (through ``children``)."""
    found = {model_id}
    for child in fe.models[model_id].get("children", []):
        found |= _tree(fe, child.removeprefix("IPY_MODEL_"))
    return found


class FrontEnd:
    """A kernel and what a front end would know of its widgets: every model's state."""

    def __init__(self) -> None:
        self.manager, self.client = start_new_kernel(kernel_name="python3")
        #: model id → its state as the browser has it.
        self.models: dict[str, dict[str, Any]] = {}
        #: model id → how many updates the browser got for it.
        self.updates: Counter[str] = Counter()

    def _take(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
            self.models[content["comm_id"]] = dict(content["data"]["state"])
        elif kind == "comm_msg" and content["comm_id"] in self.models:
            data = content["data"]
            if data.get("method") in ("update", "echo_update"):
                self.models[content["comm_id"]].update(data["state"])
                self.updates[content["comm_id"]] += 1
        elif kind == "comm_close":
            self.models.pop(content["comm_id"], None)

    def execute(self, code: str) -> dict[str, Any]:
        """Run a cell; take every comm message on the way (whichever cell they belong
        to: the background loop's updates arrive between cells)."""
        msg_id = self.client.execute(code)
        displays: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        while True:
            msg = self.client.get_iopub_msg(timeout=TIMEOUT)
            self._take(msg)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind in ("display_data", "execute_result"):
                displays.append(msg["content"]["data"])
            elif kind == "error":
                errors.append(msg["content"])
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert not errors, errors
        return {"displays": displays}

    def shown(self, code: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """Run a cell that shows one widget: its model id, model state and saved bundle."""
        displays = [d for d in self.execute(code)["displays"] if WIDGET_VIEW in d]
        assert len(displays) == 1, displays
        model_id = displays[0][WIDGET_VIEW]["model_id"]
        return model_id, self.models[model_id], displays[0]

    def child(self, state: dict[str, Any], index: int) -> tuple[str, dict[str, Any]]:
        model_id = state["children"][index].removeprefix("IPY_MODEL_")
        return model_id, self.models[model_id]

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


@pytest.fixture
def front_end():
    opened = FrontEnd()
    yield opened
    if opened.manager.is_alive():
        opened.close()


def test_early_views_keep_their_step_while_now_lines_and_the_live_view_follow(
        front_end: FrontEnd) -> None:
    fe = front_end
    fe.execute("%load_ext mcp_nb")

    # The session before its handshake, as nb 01 shows it.
    session_id, session_box, session_saved = fe.shown(f"s = %mcp connect walk --step -- {LAB}\ns")
    assert session_saved["text/plain"] == ("McpSession 'walk': Uninitialized, no version yet, "
                                           "0 messages, 0 findings")
    assert session_box["_model_name"] == "VBoxModel"
    tabs_id, tabs = fe.child(session_box, 0)
    assert tabs["_model_name"] == "TabModel"
    assert tabs["titles"][:5] == ["Lifecycle", "Handshake", "Capabilities", "Transcript",
                                  "Findings"]
    now_id, now = fe.child(session_box, 1)
    assert "now: Uninitialized" in now["value"]

    # Step by step: the handshake after initialize, the diagram after initialized.
    handshake_id, handshake_box, handshake_saved = fe.shown("%mcp initialize")
    assert handshake_saved["text/plain"] == "Handshake: initialize #1 → result (2025-11-25)"
    diagram_id, diagram_box, diagram_saved = fe.shown("%mcp initialized")
    assert diagram_saved["text/plain"].startswith("StateDiagram: Operating (path: ")
    caps_id, caps_box, _ = fe.shown("%mcp caps")
    transcript_id, transcript, transcript_saved = fe.shown("%mcp transcript")
    assert transcript_saved["text/plain"] == "Transcript: 3 messages (2 sent, 1 received)"
    live_id, live, _ = fe.shown("%mcp view")
    assert live["_model_name"] == "TabModel"  # the view itself, no snapshot box around it
    explorer_id, _, _ = fe.shown("%mcp explore")
    _, again_box, _ = fe.shown("s")  # the session shown again, now with its Explore tab
    # What the browser has been sent so far (a snapshot's models are set up as it is built).
    shown_updates = Counter(fe.updates)

    # Every snapshot has the session's one now line under it: one widget, not one each.
    assert [fe.child(box, -1)[0] for box in (handshake_box, diagram_box, caps_box,
                                             again_box)] == [now_id] * 4
    assert transcript["children"][-1] == f"IPY_MODEL_{now_id}"

    # A call running in the background: its progress is live after its cell ended.
    running_id, _, _ = fe.shown("c = %mcp call slow steps=3 interval=0.2 --background\nc")
    running_updates = Counter(fe.updates)
    fe.execute("c.result(timeout=30)")
    assert any(fe.updates[model] > running_updates[model] for model in _tree(fe, running_id))
    fe.execute("%mcp call echo text=later")
    fe.execute("%mcp shutdown walk")
    fe.execute("pass")  # anything the background loop sent after the last cell

    # The now line moved on, and says so in every snapshot (it is the same model).
    assert "now: Terminated" in fe.models[now_id]["value"]

    # The session as first shown: still before the handshake, in every tab.
    early_tabs = fe.models[tabs_id]
    _, early_diagram = fe.child(early_tabs, 0)
    assert _current_state(early_diagram["value"]) == "Uninitialized"
    _, early_caps = fe.child(early_tabs, 2)
    assert _usable(early_caps["value"]) == 0
    _, early_transcript = fe.child(early_tabs, 3)
    _, early_table = fe.child(early_transcript, 2)
    # The server's spawn (and any stderr), no message yet.
    assert not {"notifications/initialized", "tools/call"} & set(re.findall(
        r"[\w/]+", early_table["value"]))

    # The handshake as initialize left it: two messages, no initialized card filled in.
    _, handshake = fe.child(handshake_box, 0)
    _, sequence = fe.child(handshake, 0)
    assert "notifications/initialized" not in sequence["value"]

    # The diagram of the initialized cell: Operating, not Terminated.
    _, diagram = fe.child(diagram_box, 0)
    assert _current_state(diagram["value"]) == "Operating"

    # The capability table of its cell: usable now, as its prose says.
    _, caps = fe.child(caps_box, 0)
    assert _usable(caps["value"]) > 0

    # The transcript of its cell: the handshake only, never the later call.
    _, table = fe.child(transcript, 2)
    assert "initialize" in table["value"] and "tools/call" not in table["value"]

    # Nothing frozen was redrawn once shown: no later update reached the browser for any
    # model of a snapshot (the boxes, the tabs, their contents), only for the now line.
    frozen = set()
    for box_id in (session_id, handshake_id, diagram_id, caps_id, transcript_id):
        frozen |= _tree(fe, box_id) - _tree(fe, explorer_id) - {now_id}
    redrawn = {model: fe.updates[model] - shown_updates[model] for model in frozen
               if fe.updates[model] != shown_updates[model]}
    assert len(frozen) > 20 and redrawn == {}
    assert fe.updates[now_id] > shown_updates[now_id]

    # The live window followed the session to its end.
    live_diagram_id, live_diagram = fe.child(fe.models[live_id], 0)
    assert _current_state(live_diagram["value"]) == "Terminated"
    assert fe.updates[live_diagram_id] > shown_updates[live_diagram_id]
    _, live_caps = fe.child(fe.models[live_id], 2)
    assert _usable(live_caps["value"]) == 0  # nothing is usable once the session ended
    # A tab made for acting is the live explorer itself inside the snapshot.
    again_tabs = fe.models[fe.child(again_box, 0)[0]]
    assert again_tabs["children"][-1] == f"IPY_MODEL_{explorer_id}"
    assert again_tabs["titles"][-1] == "Explore"


@pytest.mark.anyio
async def test_a_snapshot_keeps_its_moment_and_its_saved_outputs_are_the_parts_then() -> None:
    async with lab_session() as session:
        view = SessionView(session, "moment")
        shot = view.snapshot()
        diagram = view.state_diagram._repr_mimebundle_()
        wire = TranscriptView(session, frozen=True, now=view.now)
        saved = (repr(view), view.static_html())
        await session.call_tool("echo", {"text": "afterwards"})
        await session.call_tool("add", {"a": 1, "b": 2})
    # What a notebook saves is the view's own text and HTML at display time, so
    # committed outputs are what they were before snapshots existed.
    assert (repr(shot), shot.static_html()) == saved
    assert diagram["text/plain"].startswith("StateDiagram: Operating (path: ")
    assert repr(view).startswith("McpSession 'moment': Terminated")
    # The transcript snapshot: the handshake only, and its filters work over those messages.
    assert repr(wire) == "Transcript: 3 messages (2 sent, 1 received)"
    wire.direction.value = "recv"
    assert repr(wire) == ("Transcript: 1 of 3 messages shown (filtered by direction recv)")
    assert "tools/call" not in wire.table.value
    view.transcript.flush()
    assert "tools/call" in view.transcript.table.value  # the live one has it
    assert wire.children[-1] is view.now and shot.now is view.now
    assert "now: Terminated" in view.now.value
