"""Spec findings: observed violations of MCP rules, by either side.

A finding is evidence, not an exception: the session keeps running and the
finding is recorded so a learner can look at exactly which message broke which
rule.  Rules are a catalogue (data) so that docs and widgets can list them.

Example::

    >>> from mcp_nb.protocol.findings import RULES, Finding
    >>> RULES["server-request-before-initialized"].section
    'basic/lifecycle#initialization'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SPEC_BASE_URL = "https://modelcontextprotocol.io/specification"

Side = Literal["client", "server"]


@dataclass(frozen=True)
class Rule:
    """One rule of the spec that the kit can observe being broken."""

    id: str
    summary: str
    #: Path below the versioned spec root, e.g. ``basic/lifecycle#initialization``.
    section: str
    #: The revision whose text states the rule.
    spec_version: str = "2025-11-25"

    def url(self, version: str | None = None) -> str:
        return f"{SPEC_BASE_URL}/{version or self.spec_version}/{self.section}"


_RULE_LIST = (
    Rule(
        "server-request-before-initialized",
        "Before the initialized notification the server should send no requests but pings, "
        "and no notifications but logging (a SHOULD NOT in the spec).",
        "basic/lifecycle#initialization",
    ),
    Rule(
        "client-message-before-initialize",
        "Before initializing, the client may send only the initialize request.",
        "basic/lifecycle#initialization",
    ),
    Rule(
        "client-request-while-initializing",
        "Until the initialize response arrives, the client should send no requests but pings "
        "(a SHOULD NOT in the spec).",
        "basic/lifecycle#initialization",
    ),
    Rule(
        "client-request-before-initialized",
        "Normal operation starts after the client has sent notifications/initialized "
        "(this client holds everything but ping back until then).",
        "basic/lifecycle#initialization",
    ),
    Rule(
        "initialized-without-prefix",
        "The handshake ends with notifications/initialized; a bare 'initialized' is an unknown "
        "notification that a server ignores, so the handshake stays unfinished.",
        "basic/lifecycle#initialization",
    ),
    Rule(
        "message-after-shutdown",
        "Once shutdown has begun no new requests are sent.",
        "basic/lifecycle#shutdown",
    ),
    Rule(
        "initialize-twice",
        "A session is initialized once; a new lifecycle needs a new session.",
        "basic/lifecycle#initialization",
    ),
    Rule(
        "capability-not-negotiated",
        "Both sides use only capabilities that were negotiated during initialization.",
        "basic/lifecycle#capability-negotiation",
    ),
    Rule(
        "invalid-json",
        "Every line on stdout must be a JSON-RPC message (logs belong on stderr).",
        "basic/transports#stdio",
    ),
    Rule(
        "invalid-message",
        "Messages must be valid JSON-RPC 2.0 objects.",
        "basic#messages",
    ),
    Rule(
        "message-too-large",
        "A message larger than the configured limit is discarded unread.",
        "basic/transports#stdio",
    ),
    Rule(
        "response-to-unknown-id",
        "A response must carry the id of a request that was sent.",
        "basic#responses",
    ),
    Rule(
        "duplicate-response",
        "Each request gets exactly one response.",
        "basic#responses",
    ),
    Rule(
        "request-id-reused",
        "Request ids must not be reused within a session.",
        "basic#requests",
    ),
    Rule(
        "unsupported-version",
        "The client disconnects if it cannot speak the version the server answered.",
        "basic/lifecycle#version-negotiation",
    ),
    Rule(
        "batch-not-allowed",
        "JSON-RPC batches are allowed only in protocol version 2025-03-26.",
        "basic#messages",
    ),
    Rule(
        "progress-unknown-token",
        "Progress notifications must reference a token from an active request.",
        "basic/utilities/progress",
    ),
    # The stateless era (2026-07-28).
    Rule(
        "removed-in-stateless-era",
        "The stateless era has no initialize handshake, ping, logging/setLevel or "
        "resources/subscribe; each request stands alone.",
        "changelog#major-changes", "2026-07-28",
    ),
    Rule(
        "result-type-missing",
        "Every result of a 2026-07-28 server carries resultType (absent is read as complete).",
        "basic#resulttype", "2026-07-28",
    ),
    Rule(
        "result-type-unknown",
        "A resultType the client does not recognise makes the result invalid.",
        "basic#resulttype", "2026-07-28",
    ),
    Rule(
        "input-required-not-allowed",
        "Only tools/call, prompts/get and resources/read may answer input_required, and an "
        "input_required result carries inputRequests or requestState.",
        "basic/patterns/mrtr#supported-requests", "2026-07-28",
    ),
    Rule(
        "input-request-undeclared",
        "A server asks only for input the client declared a capability for.",
        "basic/patterns/mrtr#server-requirements-basic-workflow", "2026-07-28",
    ),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULE_LIST}


@dataclass
class Finding:
    """One observed violation: which rule, who broke it, and the evidence."""

    rule: Rule
    side: Side
    detail: str
    #: The offending message (parsed dict) or raw text, as evidence.
    evidence: Any = None
    #: Seconds since the session started.
    time: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"[{self.side}] {self.rule.id}: {self.detail} (spec: {self.rule.section})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule.id,
            "summary": self.rule.summary,
            "section": self.rule.section,
            "side": self.side,
            "detail": self.detail,
            "evidence": self.evidence,
            "time": self.time,
        }


def make_finding(
    rule_id: str, side: Side, detail: str, evidence: Any = None, time: float = 0.0
) -> Finding:
    """Build a finding for a catalogued rule (a :class:`KeyError` for unknown rule ids)."""
    return Finding(RULES[rule_id], side, detail, evidence, time)
