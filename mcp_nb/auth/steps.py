"""One step of an authorization flow as a value: what was sent, what came back, the rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx

from .tokens import REDACTED

Outcome = Literal["ok", "not found", "fallback", "refused", "skipped"]
#: Parameters whose values are secrets or one-time proofs: shown as «redacted».
SECRET_PARAMETERS = frozenset({
    "code", "code_verifier", "client_secret", "client_assertion", "assertion",
    "refresh_token", "access_token", "subject_token", "id_token", "state",
})
#: The flow's steps in order, for the sequence diagram and ``%mcp auth --step``.
STEP_NAMES = ("challenge", "resource metadata", "server metadata", "register", "authorize",
              "callback", "token", "refresh", "retry")


@dataclass(frozen=True)
class Step:
    """One step: ``name`` (one of :data:`STEP_NAMES`), the exchange, the rule, the outcome.

    Nothing in a step holds a secret: tokens, codes, verifiers and client secrets are
    replaced by «redacted» when the step is made.
    """

    name: str
    sent: str
    received: str
    rule: str
    outcome: Outcome
    detail: str = ""

    def line(self) -> str:
        text = f"{self.name}: {self.sent} → {self.received} [{self.outcome}] {self.rule}"
        return f"{text} — {self.detail}" if self.detail else text


def shown_url(url: str | httpx.URL) -> str:
    """A URL with every secret query parameter's value redacted.

    >>> shown_url("https://as/cb?code=abc&state=xyz&iss=https%3A%2F%2Fas")
    'https://as/cb?code=«redacted»&state=«redacted»&iss=https://as'
    """
    parsed = httpx.URL(str(url))
    if not parsed.query:
        return str(parsed)
    shown = "&".join(f"{name}={REDACTED if name in SECRET_PARAMETERS else value}"
                     for name, value in parsed.params.multi_items())
    return str(parsed.copy_with(query=None)) + "?" + shown


def shown_form(fields: dict[str, str]) -> str:
    """A form body as ``name=value`` pairs, secrets redacted."""
    return "&".join(f"{name}={REDACTED if name in SECRET_PARAMETERS else value}"
                    for name, value in fields.items())


def shown_response(response: httpx.Response) -> str:
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    text = f"{response.status_code} {response.reason_phrase}"
    if response.is_redirect:
        return f"{text}, Location: {shown_url(response.headers.get('location', ''))}"
    return f"{text}, {kind or 'no content type'}, {len(response.content)} bytes"
