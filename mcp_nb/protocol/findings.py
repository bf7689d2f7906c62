"""Findings: observed breaches of MCP's rules or of the kit's own policies, by either side.

A finding is evidence, not an exception: the session keeps running and the
finding is recorded so a learner can look at exactly which message broke which
rule.  Rules are a catalogue (data) so that docs and widgets can list them.

Each rule is either a *spec* rule (it cites the section of the spec that
states it) or a *policy* of this kit (a choice the spec leaves to the client,
such as a size limit; it names the setting that changes it instead).

Example::

    >>> from mcp_nb.protocol.findings import RULES, Finding
    >>> RULES["server-request-before-initialized"].section
    'basic/lifecycle#initialization'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..i18n import N_, _
from .plaintext import plain_text

SPEC_BASE_URL = "https://modelcontextprotocol.io/specification"

Side = Literal["client", "server"]
#: "spec": the spec states the rule; "policy": the kit chose it where the spec is silent.
RuleKind = Literal["spec", "policy"]


@dataclass(frozen=True)
class Rule:
    """One rule that the kit can observe being broken: the spec's, or a policy of its own."""

    id: str
    summary: str
    #: Spec rules: path below the versioned spec root, e.g. ``basic/lifecycle#initialization``.
    #: Policies: where the kit's guide explains them (:data:`POLICY_SECTION`).
    section: str
    #: The revision whose text states the rule.
    spec_version: str = "2025-11-25"
    kind: RuleKind = "spec"
    #: Policies: the setting that changes the policy (e.g. ``max_message_bytes``), if any.
    setting: str | None = None
    #: Rules of an extension, stated outside the versioned spec: the page that states them.
    link: str | None = None

    def url(self, version: str | None = None) -> str | None:
        """Where the spec states the rule; None for the kit's own policies."""
        if self.kind == "policy":
            return None
        if self.link is not None:
            return self.link
        return f"{SPEC_BASE_URL}/{version or self.spec_version}/{self.section}"

    @property
    def text(self) -> str:
        """:attr:`summary` in the kit's language (``summary`` stays as written: it is data,
        in a finding's JSON and a recording).

        >>> RULES["duplicate-response"].text
        'Each request gets exactly one response.'
        """
        return _(self.summary)

    @property
    def source(self) -> str:
        """Where the rule comes from: ``spec: basic#responses`` or ``client policy, setting …``."""
        if self.kind == "policy":
            return f"client policy, setting {self.setting}" if self.setting else "client policy"
        return f"spec: {self.section}"


#: Where the guide (docs/guide.md) explains the kit's policies.
POLICY_SECTION = "guide#client-policies"


def _policy(rule_id: str, summary: str, setting: str | None = None) -> Rule:
    return Rule(rule_id, summary, POLICY_SECTION, kind="policy", setting=setting)


_RULE_LIST = (
    Rule(
        "server-request-before-initialized",
        N_("Before the initialized notification the server should send no requests but pings, "
           "and no notifications but logging (a SHOULD NOT in the spec)."),
        "basic/lifecycle#initialization",
    ),
    Rule(
        "client-message-before-initialize",
        N_("Before initializing, the client may send only the initialize request."),
        "basic/lifecycle#initialization",
    ),
    Rule(
        "client-request-while-initializing",
        N_("Until the initialize response arrives, the client should send no requests but pings "
           "(a SHOULD NOT in the spec)."),
        "basic/lifecycle#initialization",
    ),
    Rule(
        "client-request-before-initialized",
        N_("Normal operation starts after the client has sent notifications/initialized "
           "(this client holds everything but ping back until then)."),
        "basic/lifecycle#initialization",
    ),
    Rule(
        "initialized-without-prefix",
        N_("The handshake ends with notifications/initialized; a bare 'initialized' is an unknown "
           "notification that a server ignores, so the handshake stays unfinished."),
        "basic/lifecycle#initialization",
    ),
    Rule(
        "message-after-shutdown",
        N_("Once shutdown has begun no new requests are sent."),
        "basic/lifecycle#shutdown",
    ),
    Rule(
        "initialize-twice",
        N_("A session is initialized once; a new lifecycle needs a new session."),
        "basic/lifecycle#initialization",
    ),
    Rule(
        "capability-not-negotiated",
        N_("Both sides use only capabilities that were negotiated during initialization."),
        "basic/lifecycle#capability-negotiation",
    ),
    Rule(
        "invalid-json",
        N_("Every line on stdout must be a JSON-RPC message (logs belong on stderr)."),
        "basic/transports#stdio",
    ),
    Rule(
        "invalid-message",
        N_("Messages must be valid JSON-RPC 2.0 objects."),
        "basic#messages",
    ),
    Rule(
        "invalid-utf8",
        N_("MCP messages are UTF-8 encoded JSON-RPC."),
        "basic/transports",
    ),
    Rule(
        "response-to-unknown-id",
        N_("A response must carry the id of a request that was sent."),
        "basic#responses",
    ),
    Rule(
        "duplicate-response",
        N_("Each request gets exactly one response."),
        "basic#responses",
    ),
    Rule(
        "request-id-reused",
        N_("Request ids must not be reused within a session."),
        "basic#requests",
    ),
    Rule(
        "unsupported-version",
        N_("The client disconnects if it cannot speak the version the server answered."),
        "basic/lifecycle#version-negotiation",
    ),
    Rule(
        "batch-not-allowed",
        N_("JSON-RPC batches are allowed only in protocol version 2025-03-26."),
        "basic#messages",
    ),
    Rule(
        "progress-unknown-token",
        N_("Progress notifications must reference a token from an active request."),
        "basic/utilities/progress",
    ),
    # The stateless era (2026-07-28).
    Rule(
        "removed-in-stateless-era",
        N_("The stateless era has no initialize handshake, ping, logging/setLevel or "
           "resources/subscribe; each request stands alone."),
        "changelog#major-changes", "2026-07-28",
    ),
    Rule(
        "result-type-missing",
        N_("Every result of a 2026-07-28 server carries resultType (absent is read as complete)."),
        "basic#resulttype", "2026-07-28",
    ),
    Rule(
        "result-type-unknown",
        N_("A resultType the client does not recognise makes the result invalid."),
        "basic#resulttype", "2026-07-28",
    ),
    Rule(
        "input-required-not-allowed",
        N_("Only tools/call, prompts/get and resources/read may answer input_required, and an "
           "input_required result carries inputRequests or requestState."),
        "basic/patterns/mrtr#supported-requests", "2026-07-28",
    ),
    Rule(
        "input-request-undeclared",
        N_("A server asks only for input the client declared a capability for."),
        "basic/patterns/mrtr#server-requirements-basic-workflow", "2026-07-28",
    ),
    Rule(
        "tool-header-invalid",
        N_("A tool whose x-mcp-header annotations are invalid must not be called (the client "
           "drops it from the tool list)."),
        "basic/transports/streamable-http#custom-headers-from-tool-parameters", "2026-07-28",
    ),
    # The tasks extension (SEP-2663), stated in its SEP rather than the versioned spec.
    Rule(
        "task-transition-invalid",
        N_("A task's status moves only as the extension's table allows; a terminal status "
           "(completed, failed, cancelled) is final."),
        "SEP-2663#task-status",
        link="https://modelcontextprotocol.io/seps/2663-tasks-extension#task-status",
    ),
    Rule(
        "task-result-invalid",
        N_("A task handle (resultType task) answers only a request that supports tasks, from a "
           "client that declared the extension, and carries taskId, status and timestamps."),
        "SEP-2663#polymorphic-results",
        link="https://modelcontextprotocol.io/seps/2663-tasks-extension#polymorphic-results",
    ),
    # The kit's own policies: choices the spec leaves to the client.
    _policy(
        "message-too-large",
        N_("A message larger than the client's size limit is discarded unread (the spec sets no "
           "limit; this client does, so a server cannot exhaust its memory)."),
        "max_message_bytes",
    ),
    _policy(
        "observer-failed",
        N_("A callback or observer that raises is contained: its error is recorded and the "
           "session goes on."),
    ),
    _policy(
        "message-handling-failed",
        N_("An error while the client handles a message is recorded, the request it answers "
           "fails with it, and the session goes on."),
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
        detail = plain_text(self.detail)  # a server's words: no escapes reach a terminal
        return f"[{self.side}] {self.rule.id}: {detail} ({self.rule.source})"

    def to_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready data; a policy's also says so (``kind``, ``setting``)."""
        data = {
            "rule": self.rule.id,
            "summary": self.rule.summary,
            "section": self.rule.section,
            "side": self.side,
            "detail": self.detail,
            "evidence": self.evidence,
            "time": self.time,
        }
        if self.rule.kind == "policy":
            data.update(kind="policy", setting=self.rule.setting)
        return data


def make_finding(
    rule_id: str, side: Side, detail: str, evidence: Any = None, time: float = 0.0
) -> Finding:
    """Build a finding for a catalogued rule (a :class:`KeyError` for unknown rule ids)."""
    return Finding(RULES[rule_id], side, detail, evidence, time)
