"""mcp_nb.start_lab: an HTTP server a notebook starts dies with the kernel, however it ends."""

from __future__ import annotations

import os
import signal
import sys
import time

import httpx
import pytest
from jupyter_client.manager import start_new_kernel
from support import process_alive, wait_gone

from mcp_nb import start_lab
from mcp_nb.transports.local_server import LocalServerError, start_local_server


def test_the_lab_answers_at_its_url_and_stops() -> None:
    lab = start_lab()
    ping = httpx.post(lab.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping",
                                     "params": {"_meta": {}}},
                      headers={"Accept": "application/json, text/event-stream",
                               "MCP-Protocol-Version": "2025-11-25"}, trust_env=False)
    assert ping.status_code in (200, 400), ping.text  # it is listening, and it is MCP
    assert lab.stop() == 0
    assert not process_alive(lab.pid)
    assert lab.stop() == 0  # again: nothing more to do


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    lab = start_lab("--ignore-sigterm")
    assert lab.stop(grace=0.5) == -signal.SIGKILL


def test_a_server_that_fails_to_start_says_why() -> None:
    # argparse's own wording is Python's to change: the exit code and the flag are ours.
    with pytest.raises(LocalServerError, match=r"(?s)exit code 2.*--nope"):
        start_lab("--nope")


def test_a_server_that_never_says_ready_is_stopped() -> None:
    with pytest.raises(LocalServerError, match="said nothing matching"):
        start_local_server([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)


def test_a_sigkilled_kernel_leaves_no_lab_behind() -> None:
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        code = ("import os, subprocess, sys\n"
                "from mcp_nb import start_lab\n"
                "lab = start_lab('--ignore-sigterm')\n"
                # The control: a server started the old way, which nothing guards.
                "plain = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
                "print(os.getpid(), lab.pid, plain.pid)")
        shown: list[str] = []

        def keep_stdout(message: dict) -> None:
            if message["msg_type"] == "stream":
                shown.append(message["content"]["text"])

        reply = client.execute_interactive(code, timeout=60, output_hook=keep_stdout)
        assert reply["content"]["status"] == "ok", reply["content"]
        kernel_pid, lab_pid, plain_pid = (int(word) for word in "".join(shown).split())
        assert process_alive(lab_pid) and process_alive(plain_pid)
        os.kill(kernel_pid, signal.SIGKILL)  # no atexit, no finally: only the guards act
        assert wait_gone(lab_pid), "the lab outlived its SIGKILLed kernel"
        # The test can tell: what nothing guards is still there.
        assert process_alive(plain_pid)
        os.kill(plain_pid, signal.SIGKILL)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)



def test_stop_ends_what_the_server_started_too() -> None:
    # A wrapper that starts the real work in the background, as npx or a script would.
    server = start_local_server(
        ["/bin/sh", "-c", "sleep 120 & echo $! >&2; echo listening on http://127.0.0.1:1/mcp; "
         "wait"])
    deadline = time.monotonic() + 5
    while not server.stderr_tail(1):  # the stderr line may trail the stdout one a moment
        assert time.monotonic() < deadline, "the wrapper never said its child's pid"
        time.sleep(0.02)
    child = int(server.stderr_tail(1)[0])
    assert process_alive(child)
    server.stop(grace=1)
    assert wait_gone(child), "the server's own child outlived stop()"
    assert server.stop() == server.returncode  # a second stop touches nothing
