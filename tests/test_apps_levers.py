"""The render's speed levers, kernel side (:mod:`mcp_nb.notebook.app_levers`): each one can be
switched off, and switching it changes how fast an App comes up, never what the cell shows.

``frame_first``: the App frame's widget model is the first of the App's parts to be opened
(its model starts the View on the page), and the parts around it follow, each one model made
with its drawn value, sharing one layout and one style. The page's levers (``prestart``,
``warm_proxy``, ``warm_view``) travel with the frame's widget; their browser side is
``tests/test_apps_warm_browser.py``.
"""

from __future__ import annotations

import re
from typing import Any

import ipywidgets as w
import pytest
from ipywidgets.widgets.widget import _instances  # the open widgets, in the order opened

from mcp_nb.notebook.app_levers import LEVERS_OFF, lever, page_levers
from mcp_nb.notebook.apps import AppFrame, AppView


def _opened(call: Any) -> tuple[Any, list[Any]]:
    """``call()``'s result and the widget models it opened, in the order they were opened."""
    before = set(_instances)
    result = call()
    return result, [model for key, model in _instances.items() if key not in before]


def _shown(view: AppView) -> list[Any]:
    """What the cell shows, part by part (the frame by its settings); the clock's digits
    (its result is the time) masked."""
    parts = [view.header.value, view.verdict_line.value, view.notes.value,
             re.sub(r"\d", "#", view.result_html.value), view.diagram.value,
             list(view.consent.children)]
    frame = view.frame
    assert frame is not None
    return [*parts, frame.proxy_doc, frame.sandbox, frame.allow, frame.resource_message,
            [type(child).__name__ for child in view.children]]


def test_the_levers_are_on_unless_named_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LEVERS_OFF, raising=False)
    assert all(lever(name) for name in ("frame_first", "prestart", "warm_proxy", "warm_view"))
    assert page_levers() == {"prestart": True, "warm_proxy": True, "warm_view": True}
    monkeypatch.setenv(LEVERS_OFF, "prestart, frame_first")
    assert not lever("frame_first") and not lever("prestart") and lever("warm_proxy")
    assert page_levers() == {"prestart": False, "warm_proxy": True, "warm_view": True}
    with pytest.raises(ValueError, match="no such lever"):
        lever("warm")


def test_frame_first_opens_the_frame_before_the_parts_and_fewer_models(
        mcp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    mcp("connect clock --lab=--apps")
    monkeypatch.setenv(LEVERS_OFF, "frame_first")
    slow, slow_models = _opened(lambda: mcp("call clock label=Paris"))
    monkeypatch.setenv(LEVERS_OFF, "")
    fast, fast_models = _opened(lambda: mcp("call clock label=Paris"))
    assert isinstance(slow, AppView) and isinstance(fast, AppView)

    def kinds(models: list[Any]) -> list[str]:
        return [type(model).__name__ for model in models]

    # Off: every part opened (with its own layout and style) before the frame.
    assert kinds(slow_models).index("AppFrame") > kinds(slow_models).index("HTML")
    # On: only the view's own box and its layout come before the frame, then the parts.
    assert kinds(fast_models)[:3] == ["Layout", "AppView", "AppFrame"]
    assert kinds(fast_models).count("Layout") == 1
    assert kinds(fast_models).count("HTMLStyle") == 1
    assert len(fast_models) < len(slow_models) / 2 + 1
    assert {id(part.layout) for part in (fast.header, fast.notes, fast.diagram, fast.consent,
                                         fast.frame)} == {id(fast.layout)}
    # What the cell shows is the same either way (the header says the second render used
    # the session's copy of the resource, with its time: compared without that line).
    slow_parts, fast_parts = _shown(slow), _shown(fast)
    slow_parts[0] = fast_parts[0] = None
    assert slow_parts == fast_parts


def test_frame_first_draws_every_part_into_its_widget_later(mcp: Any) -> None:
    mcp("connect clock --lab=--apps")
    view = mcp("call clock label=Paris")
    assert isinstance(view, AppView) and view.frame is not None
    # Changes after the frame go to the widgets (one update each), as without the lever.
    view._on_frame_message(view.frame, {"kind": "created", "theme": "light"}, [])
    assert 'data-state="Loaded"' in view.diagram.value
    assert isinstance(view.diagram, w.HTML) and isinstance(view.consent, w.HBox)


def test_a_refused_resource_still_shows_its_parts_as_widgets(
        mcp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LEVERS_OFF, raising=False)
    mcp("connect bad --lab=--apps --lab=--app-fault=missing-resource")
    view = mcp("call clock label=Paris")
    assert isinstance(view, AppView) and view.frame is None
    assert [type(child) for child in view.children] == [w.HTML, w.HTML, w.HTML]
    assert "Resource MUST exist on the server" in view.header.value


def test_the_page_levers_travel_with_the_frame(
        mcp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    mcp("connect clock --lab=--apps")
    monkeypatch.setenv(LEVERS_OFF, "warm_proxy")
    view = mcp("call clock label=Paris")
    assert isinstance(view, AppView) and isinstance(view.frame, AppFrame)
    assert view.frame.levers == {"prestart": True, "warm_proxy": False, "warm_view": True}
