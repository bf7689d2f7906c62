"""How long a server waits for the answer to its own request: the lab's ``_meta`` convention.

The MCP specification has no field for it: a client cannot know when a server
will give up on a sampling, elicitation or roots request.  The lab server says
so in the request's ``_meta`` under :data:`ANSWER_WITHIN_META` (milliseconds,
its ``--client-request-timeout``), so a person answering in the notebook sees
a countdown.  The key is namespaced (``io.github.mcp-nb/``), as the spec asks
of ``_meta`` keys that are not its own; other servers do not send it, and then
nothing about their patience is shown.

Example::

    >>> params = with_answer_within({"message": "Your name?"}, 30.0)
    >>> params["_meta"]
    {'io.github.mcp-nb/answerWithinMs': 30000}
    >>> answer_within(params), answer_within({"message": "Your name?"})
    (30.0, None)
"""

from __future__ import annotations

from typing import Any

#: ``_meta`` key of a server→client request: the milliseconds the server waits for the answer.
ANSWER_WITHIN_META = "io.github.mcp-nb/answerWithinMs"


def with_answer_within(params: dict[str, Any], seconds: float) -> dict[str, Any]:
    """``params`` with the server's patience (``seconds``) added to its ``_meta``."""
    meta = params.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta[ANSWER_WITHIN_META] = round(seconds * 1000)
    return {**params, "_meta": meta}


def answer_within(params: dict[str, Any]) -> float | None:
    """The server's patience in seconds, if its request says it (a non-negative number)."""
    meta = params.get("_meta")
    value = meta.get(ANSWER_WITHIN_META) if isinstance(meta, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return None
    return float(value) / 1000
