"""Reading a ``WWW-Authenticate`` header: the Bearer challenge and its parameters (RFC 6750 §3)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import httpx

# One auth-param: name = token | quoted-string (RFC 9110 §11.2), quotes with backslash escapes.
_PARAM = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(r"\s*([A-Za-z0-9_.\-]+)(?=\s|$|,)")


@dataclass(frozen=True)
class Challenge:
    """One challenge: its scheme and parameters (names lower-cased).

    >>> c = parse_challenges('Bearer resource_metadata="https://r/.well-known/x", '
    ...                      'scope="a b", error="insufficient_scope"')[0]
    >>> (c.scheme, c.resource_metadata, c.scopes, c.error)
    ('bearer', 'https://r/.well-known/x', ('a', 'b'), 'insufficient_scope')
    """

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    #: The response also (or only) challenged with the DPoP scheme (RFC 9449 §7.1): the
    #: resource takes DPoP-bound tokens. The algorithms its ``algs`` lists, ``()`` when it
    #: lists none; ``None`` without a DPoP challenge.
    dpop_algs: tuple[str, ...] | None = None

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scopes(self) -> tuple[str, ...] | None:
        scope = self.params.get("scope")
        return tuple(scope.split()) if scope is not None else None

    @property
    def error(self) -> str | None:
        return self.params.get("error")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def parse_challenges(header: str) -> list[Challenge]:
    """Every challenge in one header value (a scheme, then its ``name=value`` parameters)."""
    challenges: list[Challenge] = []
    position = 0
    while position < len(header):
        scheme = _SCHEME.match(header, position)
        if scheme is None:
            break
        params: dict[str, str] = {}
        position = scheme.end()
        while (param := _PARAM.match(header, position)) is not None and param.end() > position:
            params[param.group(1).lower()] = _unquote(param.group(2))
            position = param.end()
        challenges.append(Challenge(scheme.group(1).lower(), params))
        position = max(position, scheme.end())
        while position < len(header) and header[position] in " ,":
            position += 1
    return challenges


def bearer_challenge(response: httpx.Response) -> Challenge | None:
    """The Bearer challenge of a 401, or of a 403 ``insufficient_scope``; else ``None``.

    A 401 without a usable header still starts the flow (with no hints), as the
    spec's fallbacks expect. A DPoP challenge beside it is noted (``dpop_algs``).

    >>> r = httpx.Response(401, headers=[("WWW-Authenticate", 'Bearer scope="a"'),
    ...                                  ("WWW-Authenticate", 'DPoP algs="ES256 RS256"')])
    >>> c = bearer_challenge(r)
    >>> c.scheme, c.scopes, c.dpop_algs
    ('bearer', ('a',), ('ES256', 'RS256'))
    """
    if response.status_code not in (401, 403):
        return None
    found = dpop = None
    for value in response.headers.get_list("www-authenticate"):
        for challenge in parse_challenges(value):
            if challenge.scheme in ("bearer", "dpop"):
                found = found or challenge
            if challenge.scheme == "dpop":
                dpop = dpop or challenge
    if dpop is not None and found is not None:
        found = replace(found, dpop_algs=tuple(dpop.params.get("algs", "").split()))
    if response.status_code == 403:
        return found if found is not None and found.error == "insufficient_scope" else None
    return found or Challenge("bearer")
