"""Which pipe backend moves a stdio server's bytes: the choice, made here and only here.

Two private strategies implement :class:`ServerProcess`:

* :mod:`._asyncio_pipes` whenever the session runs on asyncio (always, in
  Jupyter): protocol callbacks on pipes of its own, no stream or extra task
  between the pipe and the session, so a round trip costs the fewest
  event-loop iterations (benchmarks/RESULTS.md, "The stdio transport on
  asyncio's own pipes");
* :mod:`._anyio_pipes` everywhere else (trio), and on Windows, where asyncio
  reads pipes only through the proactor's overlapped I/O, which ``os.pipe()``
  does not give: anyio's process streams, portable and a little slower.

Both frame stdout into the :class:`~.framing.LineFramer` they are given and
feed stderr to a :class:`~.stderr.StderrSink`; :class:`~.transport.StdioTransport` does
the rest (events, errors, the shutdown escalation) the same way for both.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Mapping, Sequence
from typing import Protocol

from anyio.abc import TaskGroup

from ._anyio_pipes import spawn_anyio
from ._asyncio_pipes import spawn_asyncio
from .framing import LineFramer
from .stderr import StderrSink


class ServerProcess(Protocol):
    """A spawned server and its three pipes, as a pipe backend drives them."""

    pid: int

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdout_ended(self) -> bool:
        """stdout reached its end; the framer has been told (a last unterminated line counts)."""

    def write(self, data: bytes) -> Awaitable[None]:
        """Write to stdin; raises :class:`BrokenPipeError` once it is gone."""

    def read_more(self) -> Awaitable[None]:
        """Wait until more of stdout was framed (maybe no complete frame) or it ended."""

    async def close_stdin(self) -> None: ...

    async def wait(self) -> None:
        """Until the server has exited and been reaped."""

    async def aclose(self) -> None:
        """Release the pipes; called once the server has exited."""


def _running_on_asyncio() -> bool:
    """Can the asyncio pipe backend run here?

    It needs an asyncio task (anyio has no public way to ask which backend
    runs) and POSIX pipes (see the module docstring).
    """
    if sys.platform == "win32":
        return False
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no asyncio event loop in this thread
        return False


async def spawn(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None,
                frames: LineFramer, stderr: StderrSink, task_group: TaskGroup) -> ServerProcess:
    """Start ``argv`` as the leader of a new session, on the backend this event loop allows.

    Both backends start the server in a session (and process group) of its
    own: a kernel interrupt (SIGINT to the kernel's group) must cancel the
    request, not kill the server, and the group is what the shutdown signals.
    """
    if _running_on_asyncio():
        return await spawn_asyncio(argv, env=env, cwd=cwd, frames=frames, stderr=stderr)
    return await spawn_anyio(argv, env=env, cwd=cwd, frames=frames, stderr=stderr,
                             task_group=task_group)
