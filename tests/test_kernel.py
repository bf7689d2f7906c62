"""A real ipykernel: connect, step through, call, time out, interrupt a waiting cell, shut down.

Driven through jupyter_client (what JupyterLab itself uses), so interrupts are
real SIGINTs to the kernel's process group and shutdown is a real kernel exit.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel
from support import process_alive, wait_gone

TIMEOUT = 60
# An expression, evaluated in the kernel, for the current session's ClientSession.
SESSION = "__import__('mcp_nb.notebook').notebook.manager().session().session"


class Kernel:
    def __init__(self) -> None:
        self.manager, self.client = start_new_kernel(kernel_name="python3")

    def execute(self, code: str, *, interrupt_after: float | None = None) -> dict[str, Any]:
        """Run a cell; collect its reply and outputs (optionally interrupting it)."""
        msg_id = self.client.execute(code)
        if interrupt_after is not None:
            time.sleep(interrupt_after)
            self.manager.interrupt_kernel()
        outputs: list[dict[str, Any]] = []
        while True:
            msg = self.client.get_iopub_msg(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind in ("stream", "display_data", "update_display_data", "execute_result",
                        "error"):
                outputs.append({"type": kind, **msg["content"]})
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
        # Skip other replies: start_new_kernel may leave an extra kernel_info_reply behind.
        reply = self.client.get_shell_msg(timeout=TIMEOUT)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=TIMEOUT)
        return {"status": reply["content"]["status"], "reply": reply["content"],
                "outputs": outputs}

    def value(self, expression: str) -> str:
        result = self.execute(f"print({expression})")
        assert result["status"] == "ok", result
        return "".join(o["text"] for o in result["outputs"] if o["type"] == "stream").strip()

    def shutdown(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


@pytest.fixture
def kernel():
    k = Kernel()
    yield k
    if k.manager.is_alive():
        k.shutdown()


def _plain(result: dict[str, Any]) -> list[str]:
    return [o["data"]["text/plain"] for o in result["outputs"]
            if o["type"] in ("display_data", "update_display_data", "execute_result")]


def test_a_whole_session_in_a_real_kernel(kernel: Kernel) -> None:
    # The kernel is the suite's own Python, not a user-level kernelspec's: the compatibility
    # run (scripts/python_versions.py) tests each version's kernel through this module.
    assert kernel.value("repr(__import__('sys').version)") == repr(sys.version)
    assert kernel.execute("%load_ext mcp_nb")["status"] == "ok"
    connected = kernel.execute("%mcp connect --step")
    assert connected["status"] == "ok"
    assert _plain(connected) == ["McpSession 'lab': Uninitialized, no version yet, "
                                 "0 messages, 0 findings"]
    widget = connected["outputs"][0]["data"]
    assert "application/vnd.jupyter.widget-view+json" in widget
    assert 'src="data:image/svg+xml;base64,' in widget["text/html"]  # kept when untrusted

    assert _plain(kernel.execute("%mcp initialize")) == [
        "Handshake: initialize #1 → result (2025-11-25)"]
    state = _plain(kernel.execute("%mcp initialized"))
    assert state[0].startswith("StateDiagram: Operating")

    called = kernel.execute("r = %mcp call add a=20 b=22\nr.text")
    assert called["status"] == "ok"
    assert _plain(called)[-1] == "'42'"

    timed_out = kernel.execute("%mcp call slow steps=50 interval=0.1 --timeout 0.3")
    assert timed_out["status"] == "error"
    assert timed_out["reply"]["ename"] == "McpCellError"
    assert "RequestTimeout" in timed_out["reply"]["evalue"]
    # One line, no traceback wall.
    assert len(timed_out["reply"]["traceback"]) == 1
    # The progress widget's saved text claims no state (the error line says how it went),
    # and is never rewritten after the fact (nbval would not see it).
    assert _plain(timed_out) == ["Request tools/call slow #4"]
    assert not [o for o in timed_out["outputs"] if o["type"] == "update_display_data"]

    server_pid = int(kernel.value(f"{SESSION}.transport.pid"))
    assert process_alive(server_pid)

    interrupted = kernel.execute("%mcp call slow steps=100 interval=0.1", interrupt_after=1.0)
    assert interrupted["status"] == "error"
    assert "cancelled" in interrupted["reply"]["evalue"]
    cancel_ids = kernel.value(
        f"[e.message['params']['requestId'] for e in "
        f"{SESSION}.transcript.filter(method='notifications/cancelled')]")
    # Id 2 was the tools/list the first call's arguments were checked against.
    assert cancel_ids == "[4, 5]"  # the timeout's and the interrupt's
    # The session survived the interrupt.
    assert _plain(kernel.execute("%mcp call echo text=still-here"))[-1] == (
        "ToolResult (ok): still-here")

    # A second call in a row runs the loop on the kernel's main thread itself, with
    # mcp_nb's SIGINT handler in place for the call (the loop is kept parked here so
    # that it is that path, whatever the machine's speed).
    kernel.execute("__import__('mcp_nb.notebook').notebook.manager().loop"
                   "._handback_seconds = 600")
    in_a_row = kernel.execute("%mcp call echo text=first\n%mcp call slow steps=100 interval=0.1",
                              interrupt_after=1.5)
    assert in_a_row["status"] == "error"
    assert "cancelled" in in_a_row["reply"]["evalue"]
    cancel_ids = kernel.value(
        f"[e.message['params']['requestId'] for e in "
        f"{SESSION}.transcript.filter(method='notifications/cancelled')]")
    assert cancel_ids == "[4, 5, 8]"  # 7 was the echo that came first
    assert _plain(kernel.execute("%mcp call echo text=after"))[-1] == "ToolResult (ok): after"
    # The kernel's own interrupt handling is back: plain code is interrupted as ever.
    sleeping = kernel.execute("import time; time.sleep(30)", interrupt_after=1.0)
    assert sleeping["reply"]["ename"] == "KeyboardInterrupt"

    kernel.shutdown()
    assert wait_gone(server_pid), "the lab server outlived the kernel"


def test_kernel_restart_leaves_no_server_behind(kernel: Kernel) -> None:
    kernel.execute("%load_ext mcp_nb")
    kernel.execute(f"%mcp connect stubborn -- {os.sys.executable} -m mcp_nb.lab "
                   "--ignore-stdin-close --ignore-sigterm")
    server_pid = int(kernel.value(f"{SESSION}.transport.pid"))
    assert process_alive(server_pid)
    kernel.manager.restart_kernel(now=True)  # SIGKILL: no atexit runs in the old kernel
    assert wait_gone(server_pid), "a server outlived its restarted kernel"


def test_a_call_shows_in_its_own_cell_whether_it_goes_live_or_not(kernel: Kernel) -> None:
    assert kernel.execute("%load_ext mcp_nb")["status"] == "ok"
    assert kernel.execute("%mcp connect")["status"] == "ok"
    # Only a progress report can make a call go live now. A report is read in the transport's
    # callback, whose context names the cell that connected: the widget must still show here.
    kernel.execute("__import__('mcp_nb.notebook.request_views').notebook.request_views"
                   ".LIVE_AFTER = 600")
    widget_view = "application/vnd.jupyter.widget-view+json"
    quick = kernel.execute("%mcp call add a=1 b=2")
    assert [o["type"] for o in quick["outputs"]] == ["display_data", "execute_result"]
    assert widget_view not in quick["outputs"][0]["data"]  # a quick call opens no widget
    # Id 2 was the tools/list the call's arguments were checked against.
    assert _plain(quick) == ["Request tools/call add #3",
                             "ToolResult (ok): 3 + structuredContent {sum}"]
    live = kernel.execute("%mcp call slow steps=3 interval=0.05")
    assert [o["type"] for o in live["outputs"]] == ["display_data", "execute_result"]
    assert widget_view in live["outputs"][0]["data"]
    assert _plain(live) == ["Request tools/call slow #4", "ToolResult (ok): done after 3 steps"]
