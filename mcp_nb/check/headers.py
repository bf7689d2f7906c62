"""Headers the person gives the checkup (``--header NAME: VALUE``): an API key, a Host name.

A server behind a plain API key, or one that serves only its own Host name (the
DNS-rebinding defence), refuses a checkup that does not send them: could not check.
Given with ``--header`` (``run_checkup(…, headers={…})``), they go on every request to
the target's origin: the pre-flight, the checkup's sessions and its raw HTTP probes.
They never go to another origin (an authorization server the metadata names), and
their values never appear in the report: only their names (they are often secrets).
A header a probe sets itself (``Origin``, ``Accept``, ``MCP-Protocol-Version``) is
the probe's: the probe's value is what its rule is about.

Example::

    >>> parse_header("X-API-Key: s3cret")
    ('X-API-Key', 's3cret')
    >>> shown_names({"X-API-Key": "s3cret", "Host": "localhost:8000"})
    'Host, X-API-Key'
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from ..i18n import _

if TYPE_CHECKING:  # only URL targets send HTTP; the command line loads httpx lazily
    import httpx

#: An HTTP field name (RFC 9110's token).
_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def parse_header(text: str) -> tuple[str, str]:
    """``"NAME: VALUE"`` as ``(NAME, VALUE)``; a ValueError saying what is wrong otherwise."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _NAME.match(name):
        raise ValueError(_("a header is NAME: VALUE (such as \"X-API-Key: s3cret\"), not "
                           "{text!r}").format(text=text))
    if any(c in value for c in "\r\n\0"):
        raise ValueError(_("the value of header {name} has a line break").format(name=name))
    return name, value


def shown_names(headers: Mapping[str, str]) -> str:
    """The headers' names, sorted: what the report says of them (never their values)."""
    return ", ".join(sorted(headers))


def same_origin_hook(url: str, headers: Mapping[str, str]
                     ) -> Callable[[httpx.Request], Awaitable[None]]:
    """An httpx request hook adding ``headers`` to requests to ``url``'s origin only."""
    from ..auth.discovery import origin

    target = origin(url)

    async def add(request: httpx.Request) -> None:
        if origin(request.url) != target:
            return
        for name, value in headers.items():
            if name.lower() == "host":  # httpx always sets Host: the person's replaces it
                request.headers[name] = value
            else:
                request.headers.setdefault(name, value)

    return add
