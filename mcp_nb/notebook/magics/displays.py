"""What ``%mcp`` subcommands return, and how MCP results display in a notebook."""

from __future__ import annotations

from typing import Any

from ...client.session import RawExchange
from ...i18n import _
from ...protocol.models import CallToolResult
from .. import render
from ..request_views import RequestProgress, tool_result_text


class PlainRepr:
    """Mixin: the text/plain IPython shows is the repr through :func:`render.plain`.

    A server's words in a repr (a tool's name, a prompt's text) reach a terminal
    or a text front end as they are; this is where their control and bidi
    characters become visible escapes, for every display below and subclass.
    """

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(render.plain(repr(self)))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # IPython's pretty printer walks the MRO and stops at the first class defining
        # _repr_pretty_ or __repr__: a subclass with its own __repr__ (and Listing, a
        # list) would be printed raw unless each class carries the method itself.
        cls._repr_pretty_ = PlainRepr._repr_pretty_  # type: ignore[method-assign]


class Listing(PlainRepr, list):  # type: ignore[type-arg]
    """A list of items (tools, resources …) that displays as a small table with a header."""

    def __init__(self, what: str, header: tuple[str, ...], rows: list[tuple[Any, ...]],
                 items: list[Any]) -> None:
        super().__init__(items)
        self.what = what
        self.header = header
        self.rows = rows

    def __repr__(self) -> str:
        names = ", ".join(str(row[0]) for row in self.rows)
        return _("{count} {what}: {names}").format(count=len(self.rows), what=_(self.what),
                                                   names=names)

    def _repr_html_(self) -> str:
        return render.table_html([_(title) for title in self.header], self.rows)


class BackgroundCall:
    """A tool call running while the kernel stays free; shows its live progress widget."""

    def __init__(self, progress: RequestProgress, future: Any) -> None:
        self.progress = progress
        self.future = future

    def result(self, timeout: float | None = None) -> CallToolResult:
        """Wait for the result (blocks the cell)."""
        return self.future.result(timeout)

    def done(self) -> bool:
        return self.future.done()

    def __repr__(self) -> str:
        return repr(self.progress)

    def _ipython_display_(self) -> None:
        # Its cell ends before the call does: the saved output follows it to its end.
        self.progress.show(follow=True)


class RawView(PlainRepr):
    """What a ``%%mcp`` message did: entries, findings, and the state after it."""

    def __init__(self, exchange: RawExchange) -> None:
        self.exchange = exchange

    def __repr__(self) -> str:
        labels = "\n".join(f"  {e.label}" for e in self.exchange.entries
                           if e.direction != "event" or e.kind == "finding")
        return f"state after: {self.exchange.state.value}\n{labels}"

    def _repr_html_(self) -> str:
        return (f"<p>state after: <b>{render.esc(self.exchange.state.value)}</b></p>"
                + render.transcript_rows_html(self.exchange.entries)
                + (render.findings_html(self.exchange.findings) if self.exchange.findings
                   else ""))


def _plain_tool_result(result: CallToolResult, printer: Any, cycle: bool) -> None:
    printer.text(render.plain(tool_result_text(result)))


def _html_tool_result(result: CallToolResult) -> str:
    return render.content_blocks_html(result.content, result.isError, result.structuredContent)


def _no_form(result: CallToolResult) -> None:
    return None


def register_formatters(shell: Any) -> None:
    """Tool results display as readable HTML, and a short deterministic text.

    The other formatters are told that a result has no form of theirs: left to
    find out, each asks the pydantic model for its ``_repr_*_`` method twice,
    and each miss raises through pydantic's ``__getattr__``, which made showing
    a result cost three times as much as showing a number
    (``benchmarks/call_cell.py``).
    """
    formatters = shell.display_formatter.formatters
    formatters["text/plain"].for_type(CallToolResult, _plain_tool_result)
    formatters["text/html"].for_type(CallToolResult, _html_tool_result)
    for mime, formatter in formatters.items():
        if mime not in ("text/plain", "text/html"):
            formatter.for_type(CallToolResult, _no_form)


class ResourceContents(PlainRepr, list):  # type: ignore[type-arg]
    """What ``%mcp read`` returns: the contents (a list of dicts), shown by MIME type."""

    def __repr__(self) -> str:
        return render.contents_summary(self)

    def _repr_html_(self) -> str:
        return render.resource_contents_html(self)


class PromptMessages(PlainRepr, dict):  # type: ignore[type-arg]
    """What ``%mcp prompt`` returns: the ``prompts/get`` result, its messages shown by role."""

    def __repr__(self) -> str:
        messages = self.get("messages") or []
        lines = [f"Prompt: {len(messages)} messages"]
        for message in messages:
            content = message.get("content")
            blocks = content if isinstance(content, list) else [content or {}]
            text = render.content_summary(blocks)
            lines.append(f"  {message.get('role', '?')}: "
                         f"{text if len(text) <= 70 else text[:69] + '…'}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return render.prompt_messages_html(self)
