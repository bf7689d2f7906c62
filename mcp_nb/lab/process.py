"""Process knobs every transport honours: SIGTERM, stderr chatter, exit and crash timers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable

from mcp_nb.lab.knobs import Knobs
from mcp_nb.lab.rpc import diag


def prepare_process(knobs: Knobs) -> None:
    """Process-level knobs applied before serving starts."""
    if knobs.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for number in range(1, knobs.stderr_chatter + 1):
        diag(f"chatter {number} of {knobs.stderr_chatter} (--stderr-chatter)")


def arrange_exits(knobs: Knobs, stop: Callable[[str], None]) -> Callable[[], None]:
    """Call ``stop(reason)`` on SIGTERM (unless ignored) and after --exit-after.

    Returns ``restart``: the --exit-after countdown starts again from the moment it is called.
    stdio calls it on the client's first message and when the handshake is done, so a busy
    machine's slow client cannot lose the server before its session is operating. Without
    --exit-after it does nothing.
    """
    loop = asyncio.get_running_loop()
    if not knobs.ignore_sigterm:
        # On Windows this is not implemented and the default SIGTERM handling stays.
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGTERM, stop, "SIGTERM received; exiting")
    if knobs.exit_after is None:
        return lambda: None
    seconds = knobs.exit_after
    reason = f"exiting on my own after {seconds:g} s (--exit-after)"
    timer = loop.call_later(seconds, stop, reason)

    def restart() -> None:
        nonlocal timer
        timer.cancel()
        timer = loop.call_later(seconds, stop, reason)

    return restart


def crash_if_due(knobs: Knobs, received: int) -> None:
    """The --crash-after knob: die abruptly on the Nth message, without any cleanup."""
    if knobs.crash_after is not None and received >= knobs.crash_after:
        diag(f"crashing on purpose after {received} messages (--crash-after)")
        os._exit(3)
