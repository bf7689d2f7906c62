"""Comparing two sessions: the interface a server declares, and how it behaved on the same calls.

The interface is the server's info, era, protocol version, capabilities and
instructions, and every tool, resource, resource template and prompt its list
answers named, with each item's changes spelled out path by path (a tool's
input schema gaining a required parameter reads ``inputSchema.required: …``).
Behaviour pairs the calls both sessions made (same method and params, in
order) and reports different results, errors, or timings.  Either side may be
a recording or a live session.

Example::

    >>> from mcp_nb.recording.diff import Interface
    >>> before = Interface(tools={"add": {"name": "add", "inputSchema": {"type": "object"}}})
    >>> after = Interface(tools={})
    >>> [c.line() for c in before.compare(after)]
    ['- tools: add removed']
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..i18n import N_, _
from .compare import change, differences, printable, shown
from .format import Recording
from .script import MATCHED_BY_METHOD, Exchange, Script, comparable_params, match_key

if TYPE_CHECKING:
    from ..client import ClientSession

#: List methods → (section name, result key, the field that names an item).
LISTS = {
    "tools/list": ("tools", "tools", "name"),
    "resources/list": ("resources", "resources", "uri"),
    "resources/templates/list": ("templates", "resourceTemplates", "uriTemplate"),
    "prompts/list": ("prompts", "prompts", "name"),
}
SECTIONS = tuple(section for section, _, _ in LISTS.values())
#: Requests that are not calls: the handshake, liveness, and the lists (the interface).
NOT_CALLS = frozenset({*MATCHED_BY_METHOD, "ping", *LISTS})
#: A call's duration counts as changed beyond this factor, and by at least this many seconds.
TIMING_FACTOR = 2.0
TIMING_FLOOR = 0.1
_SIGN = {"added": "+", "removed": "-", "changed": "~", "only before": "<", "only after": ">"}
#: The kinds of change, marked for the catalogs: ``Change.kind`` stays English (it is data,
#: in ``to_json`` too); what is shown to a person is ``_(kind)``.
KINDS = (N_("added"), N_("removed"), N_("changed"), N_("only before"), N_("only after"),
         N_("not compared"))


@dataclass
class Change:
    """One difference: where, what kind, about what, and the details path by path."""

    section: str
    kind: str
    name: str
    details: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The change on one printable line (a server's names may hold control characters)."""
        text = f"{_SIGN.get(self.kind, '~')} {self.section}: {self.name} {_(self.kind)}"
        return printable(text + (": " + "; ".join(self.details) if self.details else ""))


def _without_meta(value: Any) -> Any:
    if isinstance(value, dict) and "_meta" in value:
        return {k: v for k, v in value.items() if k != "_meta"}
    return value


@dataclass
class Interface:
    """What a server declared in one session."""

    server_info: dict[str, Any] | None = None
    era: str | None = None
    protocol_version: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    tools: dict[str, Any] | None = None
    resources: dict[str, Any] | None = None
    templates: dict[str, Any] | None = None
    prompts: dict[str, Any] | None = None

    @classmethod
    def of(cls, recording: Recording, script: Script) -> Interface:
        header = recording.header
        interface = cls(header.server_info, header.era, header.protocol_version,
                        header.server_capabilities, header.instructions)
        for exchange in script.exchanges:
            method = exchange.trigger.method
            if method not in LISTS or exchange.response is None:
                continue
            section, key, name_field = LISTS[method]
            items = exchange.response.get("result", {}).get(key)
            if not isinstance(items, list):
                continue
            listed = getattr(interface, section)
            if listed is None or "cursor" not in (exchange.trigger.message or {}).get(
                    "params", {}):
                listed = {}  # a listing from its first page replaces an older one
            for item in items:
                if isinstance(item, dict):
                    listed[str(item.get(name_field))] = _without_meta(item)
            setattr(interface, section, listed)
        return interface

    def compare(self, after: Interface) -> list[Change]:
        changes: list[Change] = []
        for name in ("era", "protocol_version", "instructions"):
            old, new = getattr(self, name), getattr(after, name)
            if old != new:
                changes.append(Change("server", "changed", name.replace("_", " "),
                                      [change(old, new)]))
        if self.server_info != after.server_info:
            changes.append(Change("server", "changed", "server info",
                                  differences(self.server_info, after.server_info)))
        if self.capabilities != after.capabilities:
            changes.append(Change("server", "changed", "capabilities",
                                  differences(self.capabilities, after.capabilities)))
        for section in SECTIONS:
            old_items, new_items = getattr(self, section), getattr(after, section)
            if old_items is None or new_items is None:
                if old_items != new_items:
                    side = "before" if old_items is None else "after"
                    changes.append(Change(section, "not compared", "(all)",
                                          [f"never listed in the {side} session"]))
                continue
            for name in old_items:
                if name not in new_items:
                    changes.append(Change(section, "removed", name))
                elif old_items[name] != new_items[name]:
                    changes.append(Change(section, "changed", name,
                                          differences(old_items[name], new_items[name])))
            changes += [Change(section, "added", name) for name in new_items
                        if name not in old_items]
        return changes


def describe_call(exchange: Exchange) -> str:
    """``tools/call add {"a":1,"b":2}``: a call as a reader recognises it."""
    message = exchange.trigger.message or {}
    params = comparable_params(message.get("params"))
    name = params.get("name") or params.get("uri") if isinstance(params, dict) else None
    if name is not None:
        rest = {k: v for k, v in params.items() if k not in ("name", "uri")}
        arguments = rest.get("arguments", rest)
        return f"{message.get('method')} {name}" + (f" {shown(arguments)}" if arguments else "")
    return f"{message.get('method')}" + (f" {shown(params)}" if params else "")


def _outcome(exchange: Exchange) -> tuple[str, Any]:
    response = exchange.response
    if response is None:
        return "unanswered", None
    if "error" in response:
        error = response["error"]
        return "error", {"code": error.get("code"), "message": error.get("message")}
    return "result", _without_meta(response.get("result"))


def _duration(exchange: Exchange) -> float | None:
    return exchange.steps[-1].delay if exchange.answered else None


def _calls(script: Script) -> dict[tuple[str, str | None], list[Exchange]]:
    """A script's calls (not the handshake, pings or lists), grouped by what was asked."""
    found: dict[tuple[str, str | None], list[Exchange]] = {}
    for exchange in script.exchanges:
        if exchange.is_request and exchange.trigger.method not in NOT_CALLS:
            found.setdefault(match_key(exchange.trigger.message or {}), []).append(exchange)
    return found


def compare_calls(before: Script, after: Script) -> tuple[list[Change], int]:
    """Changes between the calls both made (paired in order), those only one side made, and
    how many pairs were compared."""
    old_calls, new_calls = _calls(before), _calls(after)
    changes: list[Change] = []
    paired = 0
    for key, olds in old_calls.items():
        news = new_calls.get(key, [])
        for old, new in zip(olds, news, strict=False):
            changes += _compare_call(old, new)
            paired += 1
        changes += [Change("calls", "only before", describe_call(old)) for old in olds[len(news):]]
    for key, news in new_calls.items():
        olds = old_calls.get(key, [])
        changes += [Change("calls", "only after", describe_call(new)) for new in news[len(olds):]]
    return changes, paired


def _compare_call(old: Exchange, new: Exchange) -> list[Change]:
    name = describe_call(old)
    (old_kind, old_value), (new_kind, new_value) = _outcome(old), _outcome(new)
    if old_kind != new_kind:
        return [Change("calls", "changed", name,
                       [f"{old_kind} {shown(old_value)} → {new_kind} {shown(new_value)}"])]
    if old_value != new_value:
        return [Change("calls", "changed", name,
                       [f"{old_kind} " + d for d in differences(old_value, new_value)])]
    old_time, new_time = _duration(old), _duration(new)
    if old_time is not None and new_time is not None:
        slower, faster = max(old_time, new_time), min(old_time, new_time)
        if slower - faster >= TIMING_FLOOR and slower > TIMING_FACTOR * faster:
            return [Change("timing", "changed", name,
                           [f"{old_time * 1000:.1f} ms → {new_time * 1000:.1f} ms"])]
    return []


@dataclass
class SessionDiff:
    """The differences between two sessions, for reading (:meth:`text`) and for machines."""

    before: str
    after: str
    interface: list[Change]
    behaviour: list[Change]
    #: How many calls were paired up (compared at all).
    compared_calls: int = 0

    def __bool__(self) -> bool:
        return bool(self.interface or self.behaviour)

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after,
                "interface": [asdict(c) for c in self.interface],
                "behaviour": [asdict(c) for c in self.behaviour],
                "compared_calls": self.compared_calls}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    def text(self) -> str:
        lines = [printable(f"--- {self.before}"), printable(f"+++ {self.after}")]
        if not self:
            lines.append(_("no differences (interface, and {count} calls compared)").format(
                count=self.compared_calls))
            return "\n".join(lines)
        lines.append(_("interface: {differences}").format(
            differences=_differences(len(self.interface))))
        lines += [f"  {change.line()}" for change in self.interface]
        lines.append(_("behaviour: {differences} ({count} calls compared)").format(
            differences=_differences(len(self.behaviour)), count=self.compared_calls))
        lines += [f"  {change.line()}" for change in self.behaviour]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_html_(self) -> str:
        # Imported when a diff is displayed, not before: the HTML view brings the notebook
        # layer (IPython, ipywidgets), which the recording CLI and the exporter never need.
        from .diff_html import diff_html

        return diff_html(self)


def _differences(count: int) -> str:
    return (_("no differences") if count == 0 else _("1 difference") if count == 1
            else _("{count} differences").format(count=count))


def _label(recording: Recording) -> str:
    """``lab.jsonl (mcp_nb-lab 0.1.0, 2025-11-25)``: the file's name, not where it lives."""
    info = recording.header.server_info or {}
    server = f"{info.get('name', '?')} {info.get('version', '')}".strip()
    return f"{os.path.basename(recording.source)} ({server}, {recording.header.protocol_version})"


def as_recording(side: Recording | ClientSession) -> Recording:
    """A recording as is; a live session captured (redacted) as it stands now."""
    if isinstance(side, Recording):
        return side
    from .capture import capture

    return capture(side)


def diff_recordings(before: Recording | ClientSession,
                    after: Recording | ClientSession) -> SessionDiff:
    """Everything that differs from ``before`` to ``after``."""
    old, new = as_recording(before), as_recording(after)
    old_script, new_script = Script.from_recording(old), Script.from_recording(new)
    interface = Interface.of(old, old_script).compare(Interface.of(new, new_script))
    behaviour, compared = compare_calls(old_script, new_script)
    return SessionDiff(_label(old), _label(new), interface, behaviour, compared)

