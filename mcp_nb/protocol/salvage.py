"""The request id of a response that cannot be decoded (too large, not UTF-8), from its edges.

A response the client discards still names the request it answers, and that
request should fail at once with the real cause instead of waiting out its
timeout.  Decoding the whole message is exactly what cannot be done (it is too
large, or not text), so :func:`response_id` reads only its first and last
bytes, and only the two layouts servers write: the id before the result
(``{"jsonrpc":"2.0","id":3,"result":…}``, Python SDK) or after it
(``{"result":…,"jsonrpc":"2.0","id":3}``, TypeScript SDK).  Anything else,
including a server *request* (``{"method":…}``) whose id is the server's own,
gives None: better to wait for the timeout than to fail the wrong request.

Example::

    >>> response_id(b'{"jsonrpc":"2.0","id":7,"result":{"content":[', b'')
    7
    >>> response_id(b'{"result":{"x":', b'"},"jsonrpc":"2.0","id":"a-1"}\\n')
    'a-1'
    >>> response_id(b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage"', b'}')
"""

from __future__ import annotations

import json
import re

#: How many bytes of each edge :func:`response_id` needs at most.
EDGE_BYTES = 256

_ID = rb'(-?\d{1,18}|"(?:[^"\\\x00-\x1f]|\\.){0,200}")'
_JSONRPC = rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
_ID_FIRST = re.compile(rb'\A\s*\{\s*' + _JSONRPC + rb'"id"\s*:\s*' + _ID +
                       rb'\s*,\s*' + _JSONRPC + rb'"(?:result|error)"\s*:')
_RESULT_FIRST = re.compile(rb'\A\s*\{\s*"(?:result|error)"\s*:')
_ID_LAST = re.compile(rb',\s*' + _JSONRPC + rb'"id"\s*:\s*' + _ID + rb'\s*\}\s*\Z')


def response_id(head: bytes, tail: bytes) -> int | str | None:
    """The id of the response whose first bytes are ``head`` and last bytes ``tail``.

    ``tail`` may be empty when only the start was seen; pass the same bytes
    twice for a message small enough to hold whole.
    """
    match = _ID_FIRST.match(head[:EDGE_BYTES])
    if match is None and _RESULT_FIRST.match(head[:EDGE_BYTES]):
        match = _ID_LAST.search(tail[-EDGE_BYTES:])
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) else None
