"""The lifecycle diagrams' edge tooltips speak the kit's language; states and events stay
the spec's words."""

# ruff: noqa: RUF001  (Chinese punctuation in the expected texts is meant)

from __future__ import annotations

import re

import pytest

from mcp_nb import i18n
from mcp_nb.apps.lifecycle import APP_TRANSITIONS, AppState
from mcp_nb.notebook.app_diagram import app_diagram_svg
from mcp_nb.notebook.diagrams import state_diagram_svg
from mcp_nb.notebook.render import esc
from mcp_nb.protocol.lifecycle import TRANSITIONS, State


def first_per_pair(transitions):
    """The app diagram draws one edge per (source, target): the table's first transition."""
    first: dict = {}
    for t in transitions:
        first.setdefault((t.source, t.target), t)
    return list(first.values())


DIAGRAMS = {
    "session": (lambda: state_diagram_svg(State.UNINITIALIZED),
                [t for t in TRANSITIONS if t.era != "stateless"]),
    "app": (lambda: app_diagram_svg(AppState.REQUESTED), first_per_pair(APP_TRANSITIONS)),
}


def titles(svg: str) -> list[str]:
    return re.findall(r"<line [^>]*><title>(.*?)</title></line>", svg)


@pytest.fixture
def chinese():
    i18n.set_language("zh")
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("name", DIAGRAMS)
def test_edge_titles_are_english_by_default(name) -> None:
    draw, transitions = DIAGRAMS[name]
    assert titles(draw()) == [
        f"{esc(t.source.value)} → {esc(t.target.value)}: {esc(t.event.value)} — {esc(t.meaning)}"
        for t in transitions]


@pytest.mark.parametrize("name", DIAGRAMS)
def test_edge_titles_are_chinese_in_zh_and_keep_states_and_events(chinese, name) -> None:
    draw, transitions = DIAGRAMS[name]
    drawn = titles(draw())
    assert len(drawn) == len(transitions)
    for title, t in zip(drawn, transitions, strict=True):
        head, meaning = title.split(" — ")
        assert head == f"{esc(t.source.value)} → {esc(t.target.value)}: {esc(t.event.value)}"
        assert meaning != esc(t.meaning)
        assert any("\u4e00" <= c <= "\u9fff" for c in meaning), title


def test_a_tooltip_reads_as_its_translation(chinese) -> None:
    svg = state_diagram_svg(State.OPERATING)
    assert ("Initialized → Operating: send notifications/initialized — 客户端确认；正常运行可以开始"
            in titles(svg))


def test_the_task_diagrams_tooltips_are_translated_too(chinese) -> None:
    from mcp_nb.notebook.diagrams import task_diagram_svg
    from mcp_nb.protocol.tasks import TASK_TRANSITIONS, TaskStatus

    drawn = titles(task_diagram_svg(TaskStatus.WORKING))
    assert [title.split(": ", 1)[0] for title in drawn] == [
        f"{esc(t.source.value)} → {esc(t.target.value)}" for t in TASK_TRANSITIONS]
    assert all(any("\u4e00" <= c <= "\u9fff" for c in title.split(": ", 1)[1])
               for title in drawn), drawn
    i18n.set_language("en")
    assert [title.split(": ", 1)[1] for title in titles(task_diagram_svg(TaskStatus.WORKING))
            ] == [esc(t.meaning) for t in TASK_TRANSITIONS]
