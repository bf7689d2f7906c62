"""The one error an authorization flow raises (which rule was broken, how to fix it), and how
an authorization server's own error answers are read into it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from ..i18n import _


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


def no_redirect_in_time(redirect_uri: str, wait: float) -> AuthorizationFailed:
    """The refusal of a callback that waited ``wait`` seconds and saw no redirect."""
    return AuthorizationFailed(
        _("no redirect reached {redirect_uri} within {wait} s").format(
            redirect_uri=redirect_uri, wait=format(wait, "g")),
        rule="the person did not authorize in time",
        fix=_("run the cell again, or use callback='paste'"))


def oauth_error_text(answer: Mapping[str, Any], otherwise: str = "") -> str:
    """``error — error_description`` of an OAuth error answer, else ``otherwise``.

    The same two fields come back in a redirect's query (OAuth 2.1 §4.1.2.1) and in
    a token endpoint's JSON (§3.2.4).

    >>> oauth_error_text({"error": "invalid_grant", "error_description": "expired"})
    'invalid_grant — expired'
    >>> oauth_error_text({"error": "invalid_grant"}), oauth_error_text({}, "HTTP 500")
    ('invalid_grant', 'HTTP 500')
    """
    error = answer.get("error")
    if not isinstance(error, str) or not error:
        return otherwise
    description = answer.get("error_description")
    return f"{error} — {description}" if isinstance(description, str) and description else error
