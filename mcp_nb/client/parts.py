"""The seam between a session's parts: what one part may use of another.

:class:`~mcp_nb.client.session.ClientSession` is a façade; the work is done
by its parts (one job each, see :mod:`mcp_nb.client.session`).  The parts
need each other (the request table sends ``notifications/cancelled`` through
the outbound side, the inbound side hands ``initialize``'s answer to the
handshake era …), and this object is the one door they use for that: the
session builds it, fills it in the order the parts need each other, and hands
it to each part, which takes what it uses by name (in its ``__init__``, or at
call time where the other part comes later).  The session's own public state
(lifecycle, transcript, findings, era, capabilities …) stays on the session.

Not for users: a session's parts are internal, and this is how they are wired,
not an API.  The request round trip reads parts through plain attributes
cached at construction, so the seam adds no layer to the hot path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .handshake_era import HandshakeEra
    from .inbound import Inbound
    from .lifetime import Lifetime
    from .outbound import Outbound
    from .recorder import Recorder
    from .requests import RequestTable
    from .server_requests import ServerRequests
    from .stateless_era import StatelessEra


class SessionParts:
    """The parts of one session, by name (filled by ``ClientSession.__init__``)."""

    __slots__ = ("handshake", "inbound", "lifetime", "outbound", "record", "request_once",
                 "server_requests", "stateless", "table")

    #: Findings, notes, contained observer errors.
    record: Recorder
    #: The task group, opening and the end; ``lifetime.start_soon`` runs a task in the group.
    lifetime: Lifetime
    #: The guard and the wire, the sending side.
    outbound: Outbound
    #: Ids, requests in flight, deadlines, cancellation.
    table: RequestTable
    #: The one request, one response path both eras share (``ClientSession._request_once``):
    #: guard, table, wire, wait.  Takes ``request``'s options but not its era dispatch.
    request_once: Callable[..., Any]
    #: The handlers answering server→client requests.
    server_requests: ServerRequests
    #: initialize, judging its answer, initialized.
    handshake: HandshakeEra
    #: The era probe, per-request ``_meta``, input rounds, subscriptions.
    stateless: StatelessEra
    #: The receiving side (``inbound.allow_batch``: whether batches are decoded).
    inbound: Inbound
