"""The checkup's model, sans I/O: checks, the rules they enforce, results and the report.

A :class:`Check` enforces one :class:`SpecRule` (revision, section, level and the
spec's own words); the catalogue of checks is :mod:`mcp_nb.check.catalogue`.
Running a check yields a :class:`Result` whose outcome is pass, fail, warn or
not-applicable (verdicts on the server), or error (the check itself crashed) or
could-not-check (the connection never reached MCP), with the evidence (transcript entries
or an HTTP exchange) and a one-line fix.  The level is kept apart as DESIGN.md asks: only a
MUST the cited revision says to the server can fail; a SHOULD or a MAY, a rule read from the
schema's types (``MUST (schema)``) and one the kit infers (``inferred``) can only
warn, and :meth:`Result.make` enforces that so no check can turn a recommendation
into a failure by mistake.

Example::

    >>> from mcp_nb.check.catalogue import CHECKS
    >>> from mcp_nb.check.model import Result
    >>> check = CHECKS["tools.names"]
    >>> Result.make(check, "fail", "a tool is named 'a b'").outcome   # a SHOULD only warns
    'warn'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from ..i18n import N_, _
from ..protocol.findings import SPEC_BASE_URL

#: How strongly a rule binds the server.  The first three are RFC 2119's keywords as the cited
#: sentence writes them, addressed to the server; ``MUST (schema)`` is the schema's types (the
#: source of truth, but no sentence with a keyword); ``inferred`` is the kit's reading of what
#: the spec implies.  Only a ``MUST`` can fail: every other level can only warn.
Level = Literal["MUST", "SHOULD", "MAY", "MUST (schema)", "inferred"]
LEVELS: tuple[Level, ...] = ("MUST", "SHOULD", "MAY", "MUST (schema)", "inferred")
#: The levels a spec sentence states in its own words (RFC 2119 keywords, in capitals).
SPEC_LEVELS: tuple[Level, ...] = ("MUST", "SHOULD", "MAY")
#: One line per level: what it means for a verdict (the reports' legend).
LEVEL_LEGEND: dict[Level, str] = {
    "MUST": N_("a sentence of the cited revision says MUST to the server: breaking it fails"),
    "SHOULD": N_("the spec says SHOULD (or SHOULD NOT): a deviation only warns"),
    "MAY": N_("the spec says MAY: a deviation only warns"),
    "MUST (schema)": N_("the schema's types say so, no sentence does: a deviation only warns"),
    "inferred": N_("the kit infers it from the spec, which does not say it to the server: "
                   "a deviation only warns"),
}
Outcome = Literal["pass", "fail", "warn", "not-applicable", "error", "could-not-check"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "warn", "not-applicable", "error",
                                 "could-not-check")
#: Outcomes that are no verdict on the server: the checkup could not judge (exit status 2).
UNJUDGED: tuple[Outcome, ...] = ("error", "could-not-check")


@dataclass(frozen=True)
class SpecRule:
    """What the spec says, where, and how strongly."""

    revision: str
    #: Path below the revision's root, e.g. ``basic/lifecycle#version-negotiation``.
    section: str
    level: Level
    #: The spec's sentence, quoted (checked against the revision's text).
    quote: str
    #: The specification's own page when it is not the core spec's (an extension's, such as
    #: MCP Apps); ``section`` is then the anchor on that page.
    document: str | None = None
    #: Why the level is what it is when the quote alone does not show it (the kit's words,
    #: kept out of the quote): what a schema-read or inferred rule rests on.
    note: str | None = None

    @property
    def url(self) -> str:
        if self.document is not None:
            return f"{self.document}#{self.section}"
        return f"{SPEC_BASE_URL}/{self.revision}/{self.section}"


@dataclass(frozen=True)
class Check:
    id: str
    #: lifecycle, capabilities, tools, lists, resources, prompts, completion, logging,
    #: stateless, jsonrpc, http.
    area: str
    title: str
    rule: SpecRule
    #: One line: what the server's author changes when the check fails or warns.
    fix: str

    # The title and the fix are kept in English (the JSON report and the JUnit XML are read
    # by programs and compared by --diff); these are what a person is shown, in the kit's
    # language of the moment.
    @property
    def shown_title(self) -> str:
        """The title in the kit's language (``title`` itself stays English)."""
        return _(self.title)

    @property
    def shown_fix(self) -> str:
        """The fix in the kit's language (``fix`` itself stays English)."""
        return _(self.fix)


@dataclass
class Result:
    check: Check
    outcome: Outcome
    #: What was observed (or, for not-applicable, why the check did not run).
    detail: str
    #: Transcript entries (``{"seq", "session", "label", "message"}``) or HTTP exchanges
    #: (``{"http": {...}}``); everything in it is the server's and must be escaped to show.
    evidence: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def make(cls, check: Check, outcome: Outcome, detail: str,
             evidence: list[dict[str, Any]] | None = None) -> Result:
        """A result; a fail of a rule that is not a spec MUST is a warn (a SHOULD, a schema's
        type or the kit's inference can only warn)."""
        if outcome == "fail" and check.rule.level != "MUST":
            outcome = "warn"
        return cls(check, outcome, detail, list(evidence or ()))

    @property
    def failed_must(self) -> bool:
        return self.outcome == "fail"

    def to_dict(self) -> dict[str, Any]:
        rule = self.check.rule
        return {
            "id": self.check.id, "area": self.check.area, "title": self.check.title,
            "outcome": self.outcome, "detail": self.detail,
            "rule": {"revision": rule.revision, "section": rule.section, "level": rule.level,
                     "quote": rule.quote, "note": rule.note, "url": rule.url},
            "fix": self.check.fix if self.outcome in ("fail", "warn") else None,
            "evidence": self.evidence,
        }


def transcript_evidence(session: str, entry: Any) -> dict[str, Any]:
    """A transcript entry as evidence: the session's name, the entry's number and label, and
    the message (what the HTML report folds open and the widget links to the transcript)."""
    return {"session": session, "seq": entry.seq, "label": entry.label, "message": entry.message}


@dataclass
class Report:
    target: str
    #: The era and version the main session settled (None when it could not connect).
    era: str | None
    version: str | None
    server: dict[str, Any] | None
    results: list[Result]
    seconds: float
    #: Tools the checkup was allowed to call (``--call-tools``).
    allowed_tools: list[str] = field(default_factory=list)
    #: What the connection did that the reader must know: the redirect followed, or why
    #: it never reached MCP and how to point the checkup at the server (else None).
    connection: str | None = None
    #: Every request the checkup sent, in order per session (:mod:`mcp_nb.check.sent`).
    requests_sent: list[dict[str, Any]] = field(default_factory=list)

    @property
    def counts(self) -> Counter[str]:
        return Counter(r.outcome for r in self.results)

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.failed_must]

    @property
    def exit_status(self) -> int:
        """1 when any MUST failed; else 2 when a check crashed (error) or the connection never
        reached MCP (could-not-check); else 0 (warnings never fail a CI job)."""
        if self.failed:
            return 1
        return 2 if any(r.outcome in UNJUDGED for r in self.results) else 0

    def by_area(self) -> dict[str, list[Result]]:
        areas: dict[str, list[Result]] = {}
        for result in self.results:
            areas.setdefault(result.check.area, []).append(result)
        return areas

    def result(self, check_id: str) -> Result:
        return next(r for r in self.results if r.check.id == check_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "era": self.era, "version": self.version,
            "server": self.server, "seconds": round(self.seconds, 3),
            "allowedTools": self.allowed_tools, "connection": self.connection,
            "counts": {outcome: self.counts.get(outcome, 0) for outcome in OUTCOMES},
            "exitStatus": self.exit_status,
            "results": [r.to_dict() for r in self.results],
            "requestsSent": self.requests_sent,
        }
