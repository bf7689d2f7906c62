"""No orphans: nothing a stdio server starts outlives its session, however the session ends.

The servers here start a grandchild of their own (as ``npx`` starts ``node``)
and print its pid; every test then waits, bounded, for that pid to be gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap

import anyio
import pytest
from support import process_alive, python_command, wait_gone

from mcp_nb.transports import StdioTransport, TransportEvent
from mcp_nb.transports.stdio import backends

pytestmark = pytest.mark.anyio


def server_with_grandchild(*, ignore: str = "") -> str:
    """A server that starts ``sleep 60``, prints its pid on stderr, and exits on stdin EOF.

    ``ignore`` = "stdin" keeps it running after stdin closes; "stdin+sigterm" also
    ignores SIGTERM (in the server and the grandchild), so only SIGKILL ends them.
    """
    return textwrap.dedent(f"""
        import signal, subprocess, sys, time
        ignore = {ignore!r}
        if "sigterm" in ignore:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)   # inherited by the grandchild
        child = subprocess.Popen(["sleep", "60"])
        sys.stderr.write(f"{{child.pid}}\\n"); sys.stderr.flush()
        sys.stdin.read()
        while "stdin" in ignore:
            time.sleep(1)
    """)


@pytest.fixture(params=["asyncio", "anyio"])
def pipes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "anyio":
        monkeypatch.setattr(backends, "_running_on_asyncio", lambda: False)
    return str(request.param)


@pytest.mark.parametrize("ignore", ["", "stdin", "stdin+sigterm"])
async def test_close_leaves_nothing_the_server_started(pipes: str, ignore: str) -> None:
    transport = StdioTransport(python_command(server_with_grandchild(ignore=ignore)),
                               stdin_close_grace=0.5, sigterm_grace=0.5)
    events: list[TransportEvent] = []
    async with anyio.create_task_group() as group:
        await transport.start(group, events.append)
        try:
            with anyio.fail_after(10):
                while not transport.stderr.lines:
                    await anyio.sleep(0.01)
            grandchild = int(transport.stderr.lines[0])
            assert process_alive(grandchild)
        finally:
            with anyio.fail_after(20):
                await transport.close()
            group.cancel_scope.cancel()
    try:
        assert await anyio.to_thread.run_sync(wait_gone, grandchild, 10.0)
        kinds = [event.kind for event in events]
        if ignore == "":
            # The server left on stdin EOF, its child did not: the sweep took it.
            assert kinds[-2:] == ["exited", "group swept"]
        elif ignore == "stdin+sigterm":
            assert "SIGKILL" in kinds  # SIGTERM to the group was ignored by both
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(grandchild, signal.SIGKILL)


PARENT = textwrap.dedent("""
    import sys
    import anyio
    from mcp_nb.transports import StdioTransport
    from mcp_nb.transports.stdio import process

    layers = sys.argv[1]
    if "pdeathsig" not in layers:
        process._SETPRIV = None
    if "watchdog" not in layers:
        process._WATCHDOG_SHELL = None

    async def main():
        transport = StdioTransport([sys.executable, "-c", sys.argv[2]])
        async with anyio.create_task_group() as group:
            await transport.start(group, lambda event: None)
            while not transport.stderr.lines:
                await anyio.sleep(0.01)
            print(transport.pid, transport.stderr.lines[0], flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            # Leave without closing the transport; the interpreter exits normally.
            group.cancel_scope.cancel()

    anyio.run(main)
""")


@pytest.mark.parametrize(("how", "layers"), [
    ("leave", "atexit"),                # the atexit sweep alone
    ("sigkill", "watchdog"),            # the watchdog alone: nothing runs in the parent
    ("sigkill", "watchdog+pdeathsig"),  # as the kit runs on Linux
])
def test_nothing_a_server_started_outlives_its_python_process(how: str, layers: str) -> None:
    """'leave': the parent exits normally without closing; 'sigkill': it is killed outright."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, layers, server_with_grandchild(ignore="stdin+sigterm")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        assert parent.stdout is not None and parent.stdin is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(process_alive(pid) for pid in pids)
        if how == "sigkill":
            parent.kill()
        else:
            parent.stdin.write("go\n")
            parent.stdin.flush()
        parent.wait(timeout=20)
        for pid in pids:
            assert wait_gone(pid, 10.0), f"{pid} outlived its parent ({how}, {layers})"
    finally:
        parent.kill()
        parent.wait()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
