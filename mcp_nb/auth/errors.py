"""The one error an authorization flow raises: which rule was broken, and how to fix it."""

from __future__ import annotations

import httpx


class AuthorizationFailed(httpx.HTTPError):
    """The authorization flow stopped: ``rule`` names the rule, ``fix`` what to do.

    It is an :class:`httpx.HTTPError` because it is raised inside an httpx request
    (the transport reports it like any failed exchange). Its text never holds a token.

    >>> str(AuthorizationFailed("issuer X was fetched for Y", rule="RFC 8414 §3.3",
    ...                         fix="use the issuer the resource names"))
    'issuer X was fetched for Y (RFC 8414 §3.3) — use the issuer the resource names'
    """

    def __init__(self, problem: str, *, rule: str, fix: str = "") -> None:
        self.problem = problem
        self.rule = rule
        self.fix = fix
        text = f"{problem} ({rule})"
        if fix:
            text += f" — {fix}"
        super().__init__(text)
