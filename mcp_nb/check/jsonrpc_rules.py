"""The checkup's JSON-RPC hygiene, judged at the end over every session it opened.

Nothing is sent here: each session's transcript and the findings its client
recorded while it ran (a second response to one id, a response to an unknown id,
a line that is not JSON, an error code outside JSON-RPC's rules) are the evidence,
so every exchange of every check counts.  What a batch gets is a probe of its own
(``jsonrpc.batch``, :mod:`~mcp_nb.check.handshake_features`).

Example::

    judge_jsonrpc(checkup, checkup.sessions)   # once the other checks are done
"""

from __future__ import annotations

from collections.abc import Sequence

from ..client import ClientSession
from ..i18n import _
from .model import transcript_evidence as _entry
from .recorder import Recorder

#: The codes JSON-RPC defines in its reserved range (-32768 to -32100): no other code there
#: may be used, while -32099 to -32000 is left to servers.
JSONRPC_PREDEFINED = {-32700, -32600, -32601, -32602, -32603}
#: The client's findings for a received line that is not a message (JSON, shape, UTF-8).
ERA_MESSAGE_RULES = ("invalid-json", "invalid-message", "invalid-utf8")


def judge_jsonrpc(checkup: Recorder, sessions: Sequence[tuple[str, ClientSession]]) -> None:
    """jsonrpc.ids, jsonrpc.error-codes and jsonrpc.messages, over ``sessions`` (named)."""
    if not any(e.direction == "recv" for _, s in sessions for e in s.transcript):
        checkup.skip(["jsonrpc.ids", "jsonrpc.error-codes", "jsonrpc.messages"],
                     _("nothing was received from the server"))
        return
    ids = [(n, f) for n, s in sessions for f in s.findings
           if f.rule.id in ("duplicate-response", "response-to-unknown-id")]
    checkup.put("jsonrpc.ids", "fail" if ids else "pass",
                ids[0][1].detail if ids else _("every response matched one pending request"),
                [{"session": n, "finding": f.rule.id, "message": f.evidence} for n, f in ids[:5]])
    bad, errors = [], 0
    for name, session in sessions:
        for entry in session.transcript:
            if entry.direction != "recv" or entry.kind != "error" or not entry.message:
                continue
            errors += 1
            code = (entry.message.get("error") or {}).get("code")
            if (not isinstance(code, int) or isinstance(code, bool)
                    or (-32768 <= code < -32099 and code not in JSONRPC_PREDEFINED)):
                bad.append(_entry(name, entry))
    if not errors:
        checkup.skip(["jsonrpc.error-codes"], _("the server answered no request with an error: "
                     "no error code to judge"))
    else:
        checkup.put("jsonrpc.error-codes", "fail" if bad else "pass",
                    _("{count} error(s) with a code outside the rules").format(count=len(bad))
                    if bad else _("{count} error(s), each code an integer in an allowed "
                                  "range").format(count=errors), bad[:5])
    # The server's side only: a client-side finding is the server saying the checkup sent
    # something invalid (the batch probe does, on purpose).
    garbage = [(n, f) for n, s in sessions for f in s.findings
               if f.rule.id in ERA_MESSAGE_RULES and f.side == "server"]
    checkup.put("jsonrpc.messages", "fail" if garbage else "pass",
                garbage[0][1].detail if garbage else _("every message received was valid"),
                [{"session": n, "finding": f.rule.id, "message": f.evidence}
                 for n, f in garbage[:5]])

