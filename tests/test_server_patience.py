"""The Requests tab counts down the server's patience, when the server says it.

The lab server puts its ``--client-request-timeout`` in each server→client
request's ``_meta`` (``io.github.mcp-nb/answerWithinMs``, a lab convention);
the question card shows "server waits N s more", ticking on the background
loop, and goes grey ("expired") at zero.  A server that does not say it (the
official SDK's) gets no number at all.  Real lab server, real sessions; every
wait is on a condition, with a generous limit.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_nb.protocol.patience import ANSWER_WITHIN_META

LAB = f"{sys.executable} -m mcp_nb.lab"
SDK_PEER = Path(__file__).parent / "peers" / "sdk_server.py"
COUNTDOWN = re.compile(r"server waits (\d+) s more")


def _until(condition: Callable[[], object], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def _question(inbox):
    _until(lambda: inbox.pending, "the server's request reached the Requests tab")
    return inbox.pending[0]


def _seconds_shown(question) -> int | None:
    match = COUNTDOWN.fullmatch(question.patience_label.value)
    return int(match.group(1)) if match else None


def test_the_countdown_ticks_and_stops_when_the_answer_is_sent(mcp) -> None:
    hosted = mcp(f"connect patient --elicitation form -- {LAB} --client-request-timeout 20")
    inbox = hosted.view.children[-1]
    call = mcp("call ask_user message=name? --background")
    question = _question(inbox)
    asked = hosted.session.transcript.filter(direction="recv", method="elicitation/create")[-1]
    assert asked.message["params"]["_meta"][ANSWER_WITHIN_META] == 20_000
    assert question.patience == 20.0
    first = _seconds_shown(question)
    assert first is not None and 0 < first <= 20, question.patience_label.value
    # The background loop redraws it: a smaller number comes without any cell running.
    _until(lambda: (_seconds_shown(question) or first) < first, "the countdown ticked")
    question.form.fields[0].widget.value = "Grace"
    question.buttons[0].click()  # Accept
    assert "Grace" in call.result(timeout=30).text
    assert question.status.value == "sent"
    assert question.patience_label.value == ""  # nothing left to count
    assert all(button.disabled for button in question.buttons)


def test_at_zero_the_buttons_go_grey_and_say_expired(mcp) -> None:
    hosted = mcp(f"connect hasty --elicitation form -- {LAB} --client-request-timeout 1")
    inbox = hosted.view.children[-1]
    call = mcp("call ask_user message=quick? --background")
    question = _question(inbox)
    assert question.patience == 1.0
    _until(lambda: question.status.value.startswith("expired"), "the question expired")
    assert all(button.disabled for button in question.buttons)
    assert question.patience_label.value == ""
    question.buttons[0].click()  # a late Accept changes nothing
    assert question.status.value.startswith("expired")
    _until(call.done, "the call that asked ended")
    assert inbox.answered == 0


@pytest.mark.interop
def test_a_server_that_does_not_say_gets_no_invented_number(mcp) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="the official MCP SDK (mcp>=2) is needed")
    hosted = mcp(f"connect sdk --elicitation form -- {sys.executable} {SDK_PEER}")
    inbox = hosted.view.children[-1]
    call = mcp("call greet --background")
    question = _question(inbox)
    assert question.patience is None
    assert question.seconds_left() is None
    assert question.patience_label.value == ""
    question.form.fields[0].widget.value = "Ada"
    question.buttons[0].click()  # Accept
    assert "Ada" in call.result(timeout=30).text
    assert question.status.value == "sent"
