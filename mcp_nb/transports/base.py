"""What a transport is: a mover of framed messages plus a stream of transport events.

A transport knows nothing of JSON-RPC.  It delivers one message frame (bytes)
at a time and reports what happens to the connection itself (process spawned,
stdin closed, SIGTERM, stderr lines …) through an ``emit`` callback, which the
session writes into the transcript.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anyio.abc import TaskGroup

from ..protocol.envelope import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.errors import McpError
from ..protocol.tool_headers import HeaderAnnotation

if TYPE_CHECKING:
    import httpx


@dataclass(slots=True)
class TransportEvent:
    """Something that happened to the connection rather than a message on it."""

    #: Short machine-readable kind: "spawned", "stdin closed", "SIGTERM", "SIGKILL",
    #: "exited", "group swept", "stderr", "oversized line", "stdout closed"; over HTTP
    #: "http", "stream opened" … and "reissued".  "request failed" fails one request
    #: (``data``: request_id, cause, status, limit, option, size); the session goes on.
    kind: str
    #: Human-readable detail for transcripts and widgets.
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    #: monotonic clock reading when it happened
    at: float = field(default_factory=time.monotonic)


Emit = Callable[[TransportEvent], None]


class TransportClosed(McpError):
    """The transport cannot carry messages any more (peer gone or closed by us)."""

    def __init__(self, message: str, *, exit_code: int | None = None,
                 stderr_tail: list[str] | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail or []


class Transport(abc.ABC):
    """The contract every transport implements, and every wrapper forwards.

    The session uses a transport only through the members declared here; it never
    probes one with ``getattr`` for what it can do.  Two kinds of member:

    * **Required** (abstract): moving frames and shutting down.  A class missing one
      cannot be instantiated.
    * **Abilities** (:data:`ABILITIES`): things only some transports can do.  Each has
      a default here that means "this transport does not have it", and each concrete
      transport says, member by member, whether it has the ability (it overrides the
      member) or lacks it (it names the member in :attr:`lacks`).  A wrapper
      (:class:`TransportWrapper`) forwards every one.  ``tests/test_transport_contract.py``
      walks every transport class and fails on a member neither overridden nor
      declared lacking: a wrapper that forgets one no longer degrades silently.

    Write your own transport by subclassing this one::

        class MyTransport(Transport):
            kind = "mine"
            lacks = ABILITIES  # frames only: none of the optional abilities
            async def start(self, task_group, emit): ...
            ...
    """

    #: Short name for transcripts: "stdio", "streamable-http", "sse".
    kind: str
    #: The abilities this transport does not have (their defaults here apply).
    lacks: frozenset[str] = frozenset()
    #: The largest incoming message the transport reads; the session decodes no more.
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES

    # -- required ---------------------------------------------------------------------------

    @abc.abstractmethod
    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        """Connect (spawn, open streams). Background readers run in ``task_group``."""

    @abc.abstractmethod
    async def send(self, frame: bytes) -> None:
        """Send one encoded message. Raises :class:`TransportClosed` if that is impossible."""

    @abc.abstractmethod
    async def receive(self) -> bytes:
        """Next incoming frame. Raises :class:`TransportClosed` when no more will come."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Shut the connection down the transport's proper way. Idempotent."""

    @abc.abstractmethod
    def set_protocol_version(self, version: str) -> None:
        """Told by the session once a version is negotiated (HTTP sends it as a header)."""

    @abc.abstractmethod
    def describe_exit(self) -> TransportClosed:
        """Why the peer is gone (exit code, last stderr lines) as an exception to raise."""

    @abc.abstractmethod
    def describe_target(self) -> dict[str, Any]:
        """How the server is reached, as plain values a recording keeps.

        ``kind``, and ``command``/``env``/``cwd`` for a subprocess or
        ``url``/``headers`` for HTTP.  Secrets included: the caller redacts.
        """

    # -- abilities: the defaults say "not this transport" ----------------------------------

    def send_nowait(self, frame: bytes) -> bool:
        """Send ``frame`` if that needs no waiting: True if sent, False to use :meth:`send`.

        The session's sending fast path.  Raises :class:`TransportClosed` as
        :meth:`send` does.
        """
        return False

    def take_frames_inline(self, take: Callable[[bytes], bool]) -> bool:
        """Offer incoming frames to ``take`` where they are read; False if this cannot.

        The session's receiving fast path (see :meth:`StdioTransport.take_frames_inline
        <mcp_nb.transports.stdio.StdioTransport.take_frames_inline>`).
        """
        return False

    def set_param_headers(self, tool: str, annotations: Sequence[HeaderAnnotation]) -> None:
        """Which arguments of ``tool`` travel as ``Mcp-Param-*`` headers (2026-07-28, SEP-2243).

        Only HTTP carries headers; elsewhere there is nothing to mirror them into.
        """
        return None

    @property
    def stderr_tail(self) -> Sequence[str]:
        """The last lines the server wrote to stderr; empty where there is no stderr."""
        return ()

    @property
    def auth(self) -> httpx.Auth | None:
        """The :class:`httpx.Auth` applied to every request (HTTP), if any."""
        return None


#: The optional members of :class:`Transport`, each with a "does not have it" default.
ABILITIES = frozenset({"send_nowait", "take_frames_inline", "set_param_headers", "stderr_tail",
                       "auth"})
#: The members every transport must implement itself.
REQUIRED = frozenset(Transport.__abstractmethods__) | {"kind"}
#: Everything the session may use: what a wrapper must forward.
CONTRACT = REQUIRED | ABILITIES | {"max_message_bytes"}


def _defined_below_transport(cls: type, name: str) -> bool:
    """Whether ``cls`` or a class between it and :class:`Transport` defines ``name``."""
    for klass in cls.__mro__:
        if klass is Transport:
            return False
        if name in vars(klass):
            return True
    return False


def contract_problems(cls: type[Transport]) -> list[str]:
    """What ``cls`` leaves undecided in the transport contract (empty: nothing).

    A wrapper must forward every member (:data:`CONTRACT`); any other transport
    must, for each ability, either implement it or name it in ``lacks``, not both.

    >>> from mcp_nb.transports import AutoHttpTransport, StdioTransport
    >>> contract_problems(StdioTransport), contract_problems(AutoHttpTransport)
    ([], [])
    """
    name = cls.__qualname__
    if issubclass(cls, TransportWrapper):
        return [f"{name} wraps a transport but does not forward {member!r}"
                for member in sorted(CONTRACT) if not _defined_below_transport(cls, member)]
    problems = [f"{name} does not implement the required {member!r}"
                for member in sorted(REQUIRED) if not _defined_below_transport(cls, member)]
    for member in sorted(ABILITIES):
        has, lacks = _defined_below_transport(cls, member), member in cls.lacks
        if has and lacks:
            problems.append(f"{name} implements {member!r} yet says it lacks it")
        elif not (has or lacks):
            problems.append(f"{name} neither implements {member!r} nor names it in lacks")
    problems += [f"{name}.lacks names {member!r}, which is not an optional ability"
                 for member in sorted(cls.lacks - ABILITIES)]
    return problems


class TransportWrapper(Transport):
    """A transport that stands for another (:attr:`inner`), forwarding the whole contract.

    Subclasses override what they do differently and inherit the forwarding of the
    rest, so a member added to :class:`Transport` is forwarded the day it is added
    here, not when someone remembers the wrapper.
    """

    @property
    @abc.abstractmethod
    def inner(self) -> Transport:
        """The transport doing the work right now."""

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.inner.kind

    @property
    def max_message_bytes(self) -> int:  # type: ignore[override]
        return self.inner.max_message_bytes

    async def start(self, task_group: TaskGroup, emit: Emit) -> None:
        await self.inner.start(task_group, emit)

    async def send(self, frame: bytes) -> None:
        await self.inner.send(frame)

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def close(self) -> None:
        await self.inner.close()

    def set_protocol_version(self, version: str) -> None:
        self.inner.set_protocol_version(version)

    def describe_exit(self) -> TransportClosed:
        return self.inner.describe_exit()

    def describe_target(self) -> dict[str, Any]:
        return self.inner.describe_target()

    def send_nowait(self, frame: bytes) -> bool:
        return self.inner.send_nowait(frame)

    def take_frames_inline(self, take: Callable[[bytes], bool]) -> bool:
        return self.inner.take_frames_inline(take)

    def set_param_headers(self, tool: str, annotations: Sequence[HeaderAnnotation]) -> None:
        self.inner.set_param_headers(tool, annotations)

    @property
    def stderr_tail(self) -> Sequence[str]:
        return self.inner.stderr_tail

    @property
    def auth(self) -> httpx.Auth | None:
        return self.inner.auth
