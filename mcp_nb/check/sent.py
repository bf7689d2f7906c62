"""What the checkup sent: every request, with its method and arguments, for the report.

A person pointing the checkup at their server should not have to guess what it
did there.  The sessions' transcripts already hold every message the client sent
(``initialize``, the lists, reads, ``logging/setLevel``, calls, the batch); the
raw HTTP probes are recorded as they go out (an ``httpx`` request hook).  Both
become one list on the :class:`~mcp_nb.check.model.Report` (``requests_sent``),
shown counted in the text summary, listed with ``--show-requests``, in the JSON
and in the HTML report.

The values the checkup invents (a prompt's required arguments) are inert on
purpose: :data:`SAMPLE_VALUE` is neither a URL nor a path, so a server that does
I/O with an argument touches nothing real.  :func:`looks_like_location` is the
test of that promise.

Example::

    >>> looks_like_location(SAMPLE_VALUE), looks_like_location("file:///etc/passwd")
    (False, True)
    >>> sent_label({"via": "main", "method": "prompts/get",
    ...             "params": {"name": "greet", "arguments": {"who": SAMPLE_VALUE}}})
    'main: prompts/get {"name": "greet", "arguments": {"who": "mcp-checkup-sample"}}'
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..client import ClientSession
from ..i18n import _

if TYPE_CHECKING:  # only URL targets make HTTP requests; the command line loads httpx lazily
    import httpx

#: What the checkup fills an argument it must invent with: no scheme, no slash, no dot-path.
SAMPLE_VALUE = "mcp-checkup-sample"
#: The transcript kinds that are something the client sent to the server.
_SENT_KINDS = ("request", "notification", "batch")
#: A scheme (``file:``, ``https://``), a path (``/``, ``~``, ``./``, ``C:\``), or a dot-dot.
_LOCATION = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:|^[/~\\]|^\.{1,2}[/\\]|^[A-Za-z]:[/\\]|\.\.")


def looks_like_location(value: Any) -> bool:
    """Whether ``value`` (a string) reads as a URL or a filesystem path."""
    return isinstance(value, str) and bool(_LOCATION.search(value))


def session_requests(sessions: Sequence[tuple[str, ClientSession]],
                     since: dict[int, int]) -> list[dict[str, Any]]:
    """What each named session sent, in order; ``since`` maps ``id(session)`` to the first
    transcript position that is the checkup's own (an open session's earlier traffic is not)."""
    sent = []
    for name, session in sessions:
        first = since.get(id(session), 0)
        for entry in session.transcript:
            if entry.seq < first or entry.direction != "send" or entry.kind not in _SENT_KINDS:
                continue
            if entry.message is None:  # a batch: the raw text as sent
                sent.append({"via": name, "method": _("(batch)"), "params": entry.text})
            else:
                sent.append({"via": name, "method": entry.method,
                             "params": entry.message.get("params")})
    return sent


def http_request(request: httpx.Request, via: str) -> dict[str, Any]:
    """A raw HTTP request of the probes: the verb and URL, and the JSON-RPC method and
    params its body carries (if any)."""
    body: Any = None
    try:
        body = json.loads(request.content) if request.content else None
    except ValueError:
        body = request.content.decode("utf-8", "replace")[:200]
    message = body if isinstance(body, dict) else {}
    return {"via": via, "http": f"{request.method} {request.url}",
            "method": message.get("method"), "params": message.get("params")}


def sent_label(item: dict[str, Any]) -> str:
    """One line: who sent it, the HTTP verb and URL if raw, the method and its arguments."""
    head = f"{item.get('via')}: " + (f"{item['http']} " if item.get("http") else "")
    params = item.get("params")
    shown = "" if params is None else " " + (params if isinstance(params, str) else json.dumps(
        params, ensure_ascii=False, default=repr))
    return (head + (item.get("method") or "") + shown)[:300].rstrip()


def sent_count(items: Sequence[dict[str, Any]]) -> str:
    """``42 requests sent: handshake 9, http probe 13, main 20`` (by name: sessions open
    concurrently, in no fixed order)."""
    if not items:
        return _("no request sent")
    by_via = Counter(str(i.get("via")) for i in items)
    return _("{count} requests sent: {where}").format(
        count=len(items), where=", ".join(f"{via} {n}" for via, n in sorted(by_via.items())))


def sent_html(items: Sequence[dict[str, Any]], *, stable: bool = False) -> str:
    """The list as a folded HTML block (every server-influenced string escaped); ``stable``
    sorts it, for a saved notebook (concurrent requests go out in varying order)."""
    if not items:
        return ""
    labels = [sent_label(_stable_item(i) if stable else i) for i in items]
    lines = "\n".join(html.escape(label) for label in (sorted(labels) if stable else labels))
    return (f"<details><summary>{html.escape(sent_count(items))}</summary>"
            f"<pre>{lines}</pre></details>")


def _stable_item(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its progress token masked: the client numbers tokens as it numbers
    requests, so concurrent requests take them in varying order."""
    params = item.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or "progressToken" not in meta:
        return item
    return {**item, "params": {**params, "_meta": {**meta, "progressToken": "…"}}}
