"""Redaction at record time: credentials are replaced before anything reaches a recording file.

Three kinds of secret are known when a session is saved: the values of headers
the caller supplied (an ``Authorization`` among them), environment variables
the caller gave a stdio server, and values in the command line or URL whose
name says secret (``--token X``, ``?api_key=…``, a URL password).  Each is
replaced where it is declared, and every literal occurrence of its value is
scrubbed from every string in the file (messages, stderr lines, event texts),
so a server that echoes a token back does not leak it either.  Header lines in
event texts (``Authorization: …``, ``Cookie: …``, ``Bearer …``) are masked by
pattern as well, whether or not their value was known.

Example::

    >>> redactor = Redactor(["s3cret-token"])
    >>> redactor.text("Authorization: Bearer s3cret-token")
    'Authorization: [redacted]'
    >>> redactor.command(["server", "--api-key", "abc123", "--port", "8"])
    ['server', '--api-key', '[redacted]', '--port', '8']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
#: Names (of headers, query parameters, flags, variables) whose values are secrets.
SECRET_NAME = re.compile(r"auth|token|secret|passw|api[-_]?key|cookie|credential|bearer|private"
                         r"|session[-_]?key|signature", re.IGNORECASE)
_HEADER_LINE = re.compile(r"(?i)\b(proxy-authorization|authorization|set-cookie|cookie|"
                          r"x-api-key)(\s*[:=]\s*)[^,;\]\n\r]+")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+")
#: Shorter values are redacted where declared but not scrubbed everywhere (too many false hits).
MIN_SCRUBBED_LENGTH = 4


class Redactor:
    """Scrubs a set of known secret values (and credential-shaped header lines) from strings."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret containing another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= MIN_SCRUBBED_LENGTH},
                              key=len, reverse=True)

    def add(self, secret: str) -> None:
        if len(secret) >= MIN_SCRUBBED_LENGTH and secret not in self.secrets:
            self.secrets.append(secret)
            self.secrets.sort(key=len, reverse=True)

    def literal(self, text: str) -> str:
        """``text`` with every known secret value replaced."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def text(self, text: str) -> str:
        """Free text (an event, a stderr line): known secrets and credential header lines."""
        text = _HEADER_LINE.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
        return self.literal(_BEARER.sub(f"Bearer {REDACTED}", text))

    def value(self, value: Any) -> Any:
        """A JSON value with known secrets scrubbed from every string in it (keys included)."""
        if not self.secrets:
            return value
        if isinstance(value, str):
            return self.literal(value)
        if isinstance(value, dict):
            return {self.literal(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def command(self, argv: Iterable[str]) -> list[str]:
        """A command line with the values of secret-named flags (and NAME=value pairs) redacted."""
        shown: list[str] = []
        hide_next = False
        for arg in argv:
            if hide_next:
                self.add(arg)
                shown.append(REDACTED)
                hide_next = False
                continue
            name, equals, value = arg.partition("=")
            if equals and SECRET_NAME.search(name):
                self.add(value)
                shown.append(f"{name}={REDACTED}")
                continue
            hide_next = arg.startswith("-") and bool(SECRET_NAME.search(arg))
            shown.append(self.literal(arg))
        return shown

    def url(self, url: str) -> str:
        """A URL without its password and with secret-named query values redacted."""
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password:
            self.add(parts.password)
            netloc = netloc.replace(f":{parts.password}@", f":{REDACTED}@")
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            for name, value in pairs:
                if SECRET_NAME.search(name):
                    self.add(value)
            query = urlencode([(n, REDACTED if SECRET_NAME.search(n) else v) for n, v in pairs],
                              safe="[]")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Caller-supplied headers: names kept, every value redacted (and remembered)."""
        for value in headers.values():
            self.add(value)
            # "Bearer abc": the token alone may appear elsewhere too.
            scheme, _, credential = value.partition(" ")
            if credential and scheme.isalpha():
                self.add(credential)
        return dict.fromkeys(headers, REDACTED)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """Caller-supplied environment variables: names kept, every value redacted."""
        for value in env.values():
            self.add(value)
        return dict.fromkeys(env, REDACTED)
