"""Notebook-side figures: the transcript widget with many messages.

How long the live transcript view takes to render (and to page and filter)
with 10,000 messages, and how many bytes it adds to a saved notebook — both the
output stored in the cell and the widget state JupyterLab may save with it.
Measured in this process with a session that is never opened: the transcript is
filled directly, so only the widget's own cost is timed.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

import ipywidgets as w

from mcp_nb.client import ClientSession
from mcp_nb.notebook.widgets import TranscriptView
from mcp_nb.transports import StdioTransport


def _filled_session(messages: int) -> ClientSession:
    session = ClientSession(StdioTransport([sys.executable]))
    transcript = session.transcript
    for index in range(messages // 2):
        request = {"jsonrpc": "2.0", "id": index + 1, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": f"message {index}"}}}
        response = {"jsonrpc": "2.0", "id": index + 1,
                    "result": {"content": [{"type": "text", "text": f"message {index}"}],
                               "isError": False}}
        transcript.add(index * 0.001, "send", "request", "Operating", size=90,
                       method="tools/call", id=index + 1, message=request)
        transcript.add(index * 0.001 + 0.0004, "recv", "response", "Operating", size=95,
                       method="tools/call", id=index + 1, message=response)
    return session


def _descendants(widget: w.Widget) -> list[w.Widget]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += _descendants(child)
    return found


def _timed(action: Any, *args: Any) -> float:
    started = time.perf_counter()
    action(*args)
    return time.perf_counter() - started


def _render(session: ClientSession) -> tuple[TranscriptView, float]:
    started = time.perf_counter()
    view = TranscriptView(session)
    view.flush()
    return view, time.perf_counter() - started


def measure(messages: int = 10_000, repeats: int = 5) -> dict[str, float]:
    """Medians over ``repeats`` of render/page/filter times, and the saved sizes."""
    renders, pages, filters = [], [], []
    output_bytes = state_bytes = 0
    for _ in range(repeats):
        view, seconds = _render(_filled_session(messages))
        renders.append(seconds)
        pages.append(_timed(view._turn, -1))
        filters.append(_timed(setattr, view.method, "value", "tools/call"))
        view.method.value = ""
        bundle = view._repr_mimebundle_()
        output = {"output_type": "display_data", "data": bundle, "metadata": {}}
        output_bytes = len(json.dumps(output))
        state_bytes = sum(len(json.dumps(widget.get_state(), default=str))
                          for widget in _descendants(view))
        for widget in _descendants(view):
            widget.close()
    return {
        "messages": messages,
        "render_s": statistics.median(renders),
        "page_s": statistics.median(pages),
        "filter_s": statistics.median(filters),
        "output_bytes": output_bytes,
        "widget_state_bytes": state_bytes,
    }


def table(figures: dict[str, float]) -> str:
    render_ok = figures["render_s"] < 1.0
    size = figures["output_bytes"] + figures["widget_state_bytes"]
    size_ok = size < 1_000_000
    return "\n".join([
        f"Transcript widget with {figures['messages']:,} messages (medians):",
        "",
        "| figure | value | target | reached |",
        "|---|---:|---|---|",
        f"| render (build + first page) | {figures['render_s'] * 1000:.1f} ms | < 1 s | "
        f"{'yes' if render_ok else 'no'} |",
        f"| turn a page | {figures['page_s'] * 1000:.1f} ms | | |",
        f"| filter by method | {figures['filter_s'] * 1000:.1f} ms | | |",
        f"| bytes in the saved cell output | {figures['output_bytes']:,} | | |",
        f"| bytes of widget state (if saved) | {figures['widget_state_bytes']:,} | | |",
        f"| added to the notebook, in all | {size:,} | < 1 MB | {'yes' if size_ok else 'no'} |",
    ])
