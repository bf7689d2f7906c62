"""Tokens and client registrations held by the flow, and where they are kept (never shown)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

REDACTED = "«redacted»"


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

    @classmethod
    def from_response(cls, answer: dict[str, Any], *, resource: str, issuer: str,
                      requested_scope: str | None, now: float | None = None) -> Token:
        expires_in = answer.get("expires_in")
        now = time.time() if now is None else now
        return cls(access_token=str(answer["access_token"]), resource=resource, issuer=issuer,
                   token_type=str(answer.get("token_type") or "Bearer"),
                   scope=answer.get("scope") or requested_scope,
                   expires_at=now + float(expires_in) if isinstance(expires_in, int | float)
                   else None,
                   refresh_token=answer.get("refresh_token"))

    def expired(self, now: float | None = None, leeway: float = 5.0) -> bool:
        """Expired, or about to (within ``leeway`` seconds): refresh before using it."""
        return self.expires_at is not None and (now or time.time()) >= self.expires_at - leeway

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
