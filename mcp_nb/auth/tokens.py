"""Tokens and client registrations held by the flow, and where they are kept (never shown)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

REDACTED = "«redacted»"
#: The most a token is renewed early (seconds): covers the request's flight and small clock
#: differences between this machine and the servers.
RENEW_EARLY = 5.0
#: ...but never more than this fraction of the token's lifetime: a token that lives 3 s
#: (short-lived tokens are a common hardening) is still used for 90 % of its life instead of
#: counting as expired on arrival, which would start a new authorization on every request.
RENEW_EARLY_FRACTION = 0.1


def redact(secret: str | None) -> str:
    """What is shown instead of a secret: only whether there is one.

    >>> redact("eyJhbGciOi..."), redact(None)
    ('«redacted»', '(none)')
    """
    return REDACTED if secret else "(none)"


@dataclass(frozen=True)
class Token:
    """An access token for one resource from one issuer; its repr never shows a secret.

    >>> Token("s3cret", resource="https://r/mcp", issuer="https://as", scope="a")
    Token(resource='https://r/mcp', issuer='https://as', scope='a', expires_in=None, \
refreshable=False)
    """

    access_token: str = field(repr=False)
    resource: str = ""
    issuer: str = ""
    token_type: str = "Bearer"
    scope: str | None = None
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    #: The ``expires_in`` it was issued with (seconds), which bounds how early it is renewed.
    lifetime: float | None = None

    @classmethod
    def from_response(cls, answer: dict[str, Any], *, resource: str, issuer: str,
                      requested_scope: str | None, now: float | None = None) -> Token:
        expires_in = answer.get("expires_in")
        lifetime = (float(expires_in) if isinstance(expires_in, int | float)
                    and not isinstance(expires_in, bool) else None)
        now = time.time() if now is None else now
        return cls(access_token=str(answer["access_token"]), resource=resource, issuer=issuer,
                   token_type=str(answer.get("token_type") or "Bearer"),
                   scope=answer.get("scope") or requested_scope,
                   expires_at=now + lifetime if lifetime is not None else None,
                   refresh_token=answer.get("refresh_token"), lifetime=lifetime)

    def renew_margin(self, leeway: float = RENEW_EARLY) -> float:
        """How many seconds before ``expires_at`` the token counts as expired.

        ``leeway``, but at most :data:`RENEW_EARLY_FRACTION` of the token's lifetime
        (a token of unknown lifetime, e.g. from an older token file, gets ``leeway``).

        >>> Token("t", lifetime=3600.0).renew_margin(), Token("t", lifetime=4.0).renew_margin()
        (5.0, 0.4)
        """
        if self.lifetime is None:
            return leeway
        return min(leeway, RENEW_EARLY_FRACTION * self.lifetime)

    def expired(self, now: float | None = None, leeway: float = RENEW_EARLY) -> bool:
        """Expired, or about to be (see :meth:`renew_margin`): renew before using it.

        >>> token = Token("t", expires_at=1000.0, lifetime=3.0)
        >>> token.expired(now=997.0), token.expired(now=999.6), token.expired(now=999.8)
        (False, False, True)
        """
        now = time.time() if now is None else now
        return self.expires_at is not None and now >= self.expires_at - self.renew_margin(leeway)

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple((self.scope or "").split())

    def __repr__(self) -> str:
        expires_in = (None if self.expires_at is None
                      else max(0, round(self.expires_at - time.time())))
        return (f"Token(resource={self.resource!r}, issuer={self.issuer!r}, "
                f"scope={self.scope!r}, expires_in={expires_in!r}, "
                f"refreshable={self.refresh_token is not None})")

    def with_refresh(self, answer: dict[str, Any]) -> Token:
        """This token renewed by a refresh answer (a refresh token not rotated is kept)."""
        renewed = Token.from_response(answer, resource=self.resource, issuer=self.issuer,
                                      requested_scope=self.scope)
        return replace(renewed, refresh_token=renewed.refresh_token or self.refresh_token)


@dataclass(frozen=True)
class Registration:
    """A client identity at one authorization server (pre-registered, CIMD or DCR)."""

    issuer: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str = "none"
    how: str = "pre-registered"
    redirect_uri: str | None = None


class TokenStore(Protocol):
    """Where tokens live between flows, keyed by resource and issuer."""

    def load(self, resource: str, issuer: str | None = None) -> Token | None: ...

    def save(self, token: Token) -> None: ...

    def forget(self, resource: str) -> None: ...


class MemoryStore:
    """Tokens in this process only (the default): gone when the kernel stops."""

    def __init__(self) -> None:
        self._tokens: dict[str, Token] = {}

    def load(self, resource: str, issuer: str | None = None) -> Token | None:
        token = self._tokens.get(resource)
        return token if token is not None and issuer in (None, token.issuer) else None

    def save(self, token: Token) -> None:
        self._tokens[token.resource] = token

    def forget(self, resource: str) -> None:
        self._tokens.pop(resource, None)


class FileStore(MemoryStore):
    """Tokens in a JSON file readable by its owner only (mode 0600), keyed by resource.

    Example::

        auth = OAuth(store=FileStore("~/.config/mcp_nb/tokens.json"))
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path).expanduser()
        if self.path.exists():
            for entry in json.loads(self.path.read_text(encoding="utf-8")).values():
                super().save(Token(**entry))

    def save(self, token: Token) -> None:
        super().save(token)
        self._write()

    def forget(self, resource: str) -> None:
        super().forget(resource)
        self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({key: asdict(token) for key, token in self._tokens.items()})
        # Created 0600 before anything is written, so no other user can ever read it.
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.chmod(self.path, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
