"""The stdio transport's pipes, against real child processes, on both pipe backends.

``asyncio`` is what runs whenever the session is on asyncio (the stdio package's
``_asyncio_pipes``); ``anyio`` is the fallback for other event loops (``_anyio_pipes``),
chosen here on asyncio by overriding the backend check, so both are tested on the same servers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import textwrap
from collections.abc import AsyncIterator

import anyio
import pytest
from support import LoopIterations, python_command, wait_gone

from mcp_nb.transports import StdioTransport, TransportClosed, TransportEvent
from mcp_nb.transports.stdio import backends
from mcp_nb.transports.stdio._anyio_pipes import AnyioServerProcess
from mcp_nb.transports.stdio._asyncio_pipes import AsyncioServerProcess

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "anyio"])
def pipes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "anyio":
        monkeypatch.setattr(backends, "_running_on_asyncio", lambda: False)
    return str(request.param)


@contextlib.asynccontextmanager
async def running(code: str, **options: object) -> AsyncIterator[
        tuple[StdioTransport, list[TransportEvent]]]:
    """A started transport to an inline Python server, closed (escalating if need be) after."""
    transport = StdioTransport(python_command(textwrap.dedent(code)),  # type: ignore[arg-type]
                               stdin_close_grace=1.0, sigterm_grace=1.0, **options)
    events: list[TransportEvent] = []
    async with anyio.create_task_group() as group:
        await transport.start(group, events.append)
        try:
            yield transport, events
        finally:
            await transport.close()
            group.cancel_scope.cancel()


def kinds(events: list[TransportEvent]) -> list[str]:
    return [event.kind for event in events]


async def test_the_backend_follows_the_event_loop(pipes: str) -> None:
    async with running("import sys; sys.stdin.read()") as (transport, _):
        expected = AsyncioServerProcess if pipes == "asyncio" else AnyioServerProcess
        assert isinstance(transport._server, expected)


SPLIT_AND_BATCHED = """
    import sys, time
    out = sys.stdout.buffer
    for piece in (b'{"part":', b' "one", "of"', b': 3}\\n'):   # one message, three writes
        out.write(piece); out.flush(); time.sleep(0.05)
    out.write(b"".join(b'{"n": %d}\\n' % n for n in range(500)))   # many messages, one write
    out.flush()
    sys.stdin.read()
"""


async def test_a_message_split_across_writes_and_many_in_one_write_arrive_whole_in_order(
        pipes: str) -> None:
    async with running(SPLIT_AND_BATCHED) as (transport, _):
        with anyio.fail_after(10):
            assert await transport.receive() == b'{"part": "one", "of": 3}'
            for n in range(500):
                assert await transport.receive() == b'{"n": %d}' % n


OVERSIZED_IN_PIECES = """
    import sys, time
    out = sys.stdout.buffer
    for _ in range(10):                       # 5,000 bytes without a newline, in pieces
        out.write(b"x" * 500); out.flush(); time.sleep(0.01)
    out.write(b'xx\\n{"next": 1}\\n'); out.flush()
    sys.stdin.read()
"""


async def test_an_oversized_line_arriving_in_pieces_is_dropped_and_the_next_line_delivered(
        pipes: str) -> None:
    async with running(OVERSIZED_IN_PIECES, max_message_bytes=1000) as (transport, events):
        with anyio.fail_after(10):
            assert await transport.receive() == b'{"next": 1}'
    oversized = [event for event in events if event.kind == "oversized line"]
    assert len(oversized) == 1
    # Reported when its newline came, so with its whole size.
    assert oversized[0].data == {"size": 5002, "limit": 1000}


async def test_a_last_message_without_its_newline_is_delivered_at_the_end_of_stdout(
        pipes: str) -> None:
    code = 'import sys; sys.stdout.write(\'{"last": true}\'); sys.stderr.write("bye")'
    async with running(code) as (transport, events):
        with anyio.fail_after(10):
            assert await transport.receive() == b'{"last": true}'
            with pytest.raises(TransportClosed):
                await transport.receive()
            while transport.returncode is None:  # the exit is reported apart from stdout
                await anyio.sleep(0.01)
        assert "stdout closed" in kinds(events)
    assert transport.returncode == 0
    assert list(transport.stderr_tail) == ["bye"]  # stderr's last line, also unterminated


async def test_sending_to_a_server_that_has_exited_raises_transport_closed(pipes: str) -> None:
    async with running("import sys; sys.stderr.write('leaving early\\n')") as (transport, _):
        with anyio.fail_after(10):
            while transport.returncode is None:
                await anyio.sleep(0.01)
            with pytest.raises(TransportClosed, match="exit code 0; last stderr: leaving early"):
                for _ in range(100):  # a pipe may take the first write before it breaks
                    await transport.send(b'{"jsonrpc": "2.0", "method": "ping", "id": 1}')
                    await anyio.sleep(0.01)


FLOOD = """
    import sys
    line = b'{"pad": "%s"}\\n' % (b"p" * 80)
    sys.stdout.buffer.write(line * 100_000); sys.stdout.flush()   # 10 MB at once
    sys.stdin.read()
"""


async def test_a_server_writing_faster_than_the_session_reads_fills_its_pipe_not_our_memory(
        pipes: str) -> None:
    async with running(FLOOD) as (transport, _):
        await anyio.sleep(1.0)  # the server has long written everything it could
        # Unread frames stay bounded: reading stops at a few hundred frames (plus the
        # rest of the chunk that crossed the line), far below the 100,000 written.
        assert len(transport._framer.frames) < 5_000
        with anyio.fail_after(20):
            for _ in range(100_000):
                assert await transport.receive() == b'{"pad": "%s"}' % (b"p" * 80)


SLOW_READER = """
    import sys, time
    time.sleep(0.5)                           # the pipe fills up meanwhile
    received = 0
    for line in sys.stdin.buffer:
        if line == b"end\\n":
            break
        received += len(line)
    sys.stdout.write('{"received": %d}\\n' % received); sys.stdout.flush()
    sys.stdin.read()
"""


async def test_a_sender_waits_while_the_stdin_pipe_is_full_and_everything_arrives(
        pipes: str) -> None:
    frame = b"y" * 8191  # 8 KiB with the newline
    async with running(SLOW_READER) as (transport, _):
        with anyio.fail_after(20):
            started = anyio.current_time()
            for _ in range(256):  # 2 MiB: far more than the pipe and the write buffer hold
                await transport.send(frame)
            waited = anyio.current_time() - started
            await transport.send(b"end")
            assert await transport.receive() == b'{"received": %d}' % (256 * 8192)
    # The sends could only finish after the server started reading.
    assert waited >= 0.3


ECHO = """
    import sys
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(line); sys.stdout.flush()
"""


async def test_a_cancelled_receive_leaves_the_transport_usable(pipes: str) -> None:
    async with running(ECHO) as (transport, _):
        with anyio.move_on_after(0.2) as scope:
            await transport.receive()  # nothing comes: cancelled while waiting
        assert scope.cancelled_caught
        with anyio.fail_after(10):
            for n in range(3):
                await transport.send(b'{"n": %d}' % n)
                assert await transport.receive() == b'{"n": %d}' % n


async def test_stderr_lines_become_events_as_they_arrive(pipes: str) -> None:
    code = """
        import sys
        sys.stderr.write("first\\r\\nsecond\\n"); sys.stderr.flush()
        sys.stdin.read()
    """
    async with running(code) as (transport, events):
        with anyio.fail_after(10):
            while len(transport.stderr_tail) < 2:
                await anyio.sleep(0.01)
    assert list(transport.stderr_tail) == ["first", "second"]
    assert [e.detail for e in events if e.kind == "stderr"] == ["first", "second"]


GRANDCHILD_KEEPS_STDOUT = """
    import subprocess, sys
    # Inherits this server's stdout and outlives it.
    child = subprocess.Popen(["sleep", "60"])
    sys.stderr.write(f"{child.pid}\\n"); sys.stderr.flush()
    sys.stdin.read()                          # then exit on stdin EOF, leaving the child
"""


async def test_close_returns_when_the_server_exits_though_a_grandchild_holds_its_stdout() -> None:
    # asyncio backend only: anyio's process wait() also waits for the pipes to close,
    # which there only the sweep after the exit makes happen.
    async with running(GRANDCHILD_KEEPS_STDOUT) as (transport, events):
        with anyio.fail_after(10):
            while not transport.stderr_tail:
                await anyio.sleep(0.01)
        grandchild = int(transport.stderr_tail[0])
        try:
            with anyio.fail_after(5):
                await transport.close()
            assert kinds(events)[-2:] == ["exited", "group swept"] and transport.returncode == 0
            assert "SIGTERM" not in kinds(events)
            assert wait_gone(grandchild, 5)  # swept with the rest of the server's group
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(grandchild, signal.SIGKILL)


async def test_a_frame_read_wakes_the_waiting_reader_in_the_same_iteration(pipes: str) -> None:
    """The read callback resumes a task waiting in receive() in place, no call_soon hop.

    A count, not a timing.  Through asyncio's subprocess streams a frame took two
    more iterations to reach the reader (benchmarks/RESULTS.md).  The session's own
    round trip (one iteration, responses taken in the read callback) is in
    test_inline_responses.py.
    """
    code = """
        import sys
        for line in sys.stdin:
            sys.stdout.write(line)
            sys.stdout.flush()
    """
    async with running(code) as (transport, _):
        for _ in range(10):
            await transport.send(b"warm")
            assert await transport.receive() == b"warm"
        with LoopIterations() as iterations:
            for number in range(200):
                await transport.send(b"%d" % number)
                assert await transport.receive() == b"%d" % number
    # asyncio: one iteration per echo (a line arriving in two reads costs one more).
    # anyio's streams: the subprocess hop and the stream's wake-up, three or more.
    if pipes == "asyncio":
        assert 200 <= iterations.count <= 220
    else:
        assert iterations.count >= 200 * 3
