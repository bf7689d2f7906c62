"""Each session keeps the ui:// resources its Apps were rendered from, until the server says
they changed (MCP Apps 2026-01-26: the host MAY prefetch and cache UI resource content).

Against the real lab server (stdio) through the magics: what is counted is ``resources/read``
on the session's wire, so a copy that is wrongly kept or wrongly dropped shows there.
"""

from __future__ import annotations

from typing import Any

from mcp_nb.notebook.app_cache import AppResourceCache
from mcp_nb.notebook.apps import AppView
from mcp_nb.protocol.envelope import Notification

CLOCK = "ui://lab/clock.html"


def _reads(hosted: Any) -> int:
    return len(hosted.session.transcript.filter(direction="send", method="resources/read"))


def test_a_second_call_of_an_app_uses_the_sessions_copy(mcp: Any) -> None:
    hosted = mcp("connect clock --lab=--apps")
    first = mcp("call clock label=Paris")
    second = mcp("call clock label=Rome")
    assert isinstance(first, AppView) and isinstance(second, AppView)
    assert _reads(hosted) == 1
    assert first.cached_copy is None and second.cached_copy is not None
    assert "this session&#x27;s copy of resources/read" in second.header.value
    # The same HTML and policy reach the frame either way.
    assert second.frame.resource_message == first.frame.resource_message
    assert second.frame.proxy_doc == first.frame.proxy_doc
    assert hosted.app_resources.hits == 1


def test_the_step_walk_always_reads_and_refreshes_the_copy(mcp: Any) -> None:
    hosted = mcp("connect clock --lab=--apps")
    mcp("call clock")
    mcp("app clock --step")
    mcp("app --next")  # call
    mcp("app --next")  # read: on the wire again, though a copy exists
    assert _reads(hosted) == 2
    mcp("call clock")
    assert _reads(hosted) == 2


def test_resources_list_changed_drops_every_copy(mcp: Any) -> None:
    hosted = mcp("connect clock --lab=--apps --lab=--list-changes")
    mcp("call clock")
    assert CLOCK in hosted.app_resources
    mcp("call toggle_bonus")  # the server says notifications/resources/list_changed
    hosted.settle()
    assert hosted.session.transcript.filter(direction="recv",
                                            method="notifications/resources/list_changed")
    assert CLOCK not in hosted.app_resources and hosted.app_resources.dropped == 1
    mcp("call clock")
    assert _reads(hosted) == 2


def test_resources_updated_drops_that_resource_only(mcp: Any) -> None:
    hosted = mcp("connect clock --lab=--apps")
    mcp("call clock")
    cache: AppResourceCache = hosted.app_resources
    cache._on_notification(Notification(method="notifications/resources/updated",
                                        params={"uri": "ui://lab/other.html"}))
    assert CLOCK in cache
    cache._on_notification(Notification(method="notifications/resources/updated",
                                        params={"uri": CLOCK}))
    assert CLOCK not in cache
    mcp("call clock")
    assert _reads(hosted) == 2


def test_a_read_that_straddles_a_change_is_not_kept(mcp: Any) -> None:
    hosted = mcp("connect clock --lab=--apps")
    cache: AppResourceCache = hosted.app_resources

    def run_then_change(coroutine: Any) -> Any:
        contents = hosted.run(coroutine)
        cache.drop()  # the server said list_changed while the answer was on its way
        return contents

    contents, copy = cache.read(run_then_change, CLOCK)
    assert copy is None and contents and CLOCK not in cache


def test_switched_off_every_render_reads(mcp: Any) -> None:
    hosted = mcp("connect clock --lab=--apps")
    hosted.app_resources.enabled = False
    mcp("call clock")
    mcp("call clock")
    assert _reads(hosted) == 2
