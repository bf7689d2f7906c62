"""Helpers for tests that drive real lab-server sessions over real subprocesses."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio

from mcp_nb.client import ClientSession, lab_command
from mcp_nb.transports import StdioTransport


@contextlib.asynccontextmanager
async def lab_session(
    *flags: str,
    connect: bool = True,
    stdin_close_grace: float = 2.0,
    sigterm_grace: float = 2.0,
    stderr_lines: int = 500,
    **session_options: Any,
) -> AsyncIterator[ClientSession]:
    """A session to ``python -m mcp_nb.lab FLAGS…``, connected unless ``connect=False``."""
    transport = StdioTransport(
        lab_command(*flags),
        stdin_close_grace=stdin_close_grace,
        sigterm_grace=sigterm_grace,
        stderr_lines=stderr_lines,
    )
    async with ClientSession(transport, **session_options) as session:
        if connect:
            await session.connect()
        yield session


def python_command(code: str) -> list[str]:
    """argv running a tiny inline Python program (for transports tests with odd servers)."""
    return [sys.executable, "-c", code]


def sent(session: ClientSession, method: str) -> list[dict[str, Any]]:
    """Messages the client sent with ``method``, in order."""
    return [e.message for e in session.transcript.filter(direction="send", method=method)
            if e.message is not None]


def event_kinds(session: ClientSession) -> list[str]:
    return [e.kind for e in session.transcript.events()]


def rules(session: ClientSession) -> list[str]:
    return [f.rule.id for f in session.findings]


def process_alive(pid: int) -> bool:
    """Is ``pid`` running? A zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    """Wait until ``pid`` is gone; False if it is still running after ``timeout``."""
    deadline = time.monotonic() + timeout
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


async def until_in_flight(session: ClientSession, timeout: float = 5.0) -> None:
    """Wait until some request of ``session`` is on the wire and unanswered."""
    with anyio.fail_after(timeout):
        while not session.in_flight:
            await anyio.sleep(0.01)


class LoopIterations:
    """Counts asyncio event-loop iterations (``BaseEventLoop._run_once`` calls) inside ``with``.

    A count, not a timing: the same on a busy machine as on an idle one.
    """

    def __init__(self) -> None:
        self.count = 0
        self._run_once = asyncio.BaseEventLoop._run_once  # type: ignore[attr-defined]

    def __enter__(self) -> LoopIterations:
        run_once = self._run_once

        def counting(loop: asyncio.BaseEventLoop) -> None:
            self.count += 1
            run_once(loop)

        asyncio.BaseEventLoop._run_once = counting  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc_info: object) -> None:
        asyncio.BaseEventLoop._run_once = self._run_once  # type: ignore[attr-defined]


_SVG_IMAGE = re.compile(r'<img alt="[^"<>]*" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"/>')


def svg_images_opened(markup: str) -> str:
    """Static HTML with each SVG image (render.svg_image_html) replaced by the SVG it holds.

    Escaping checks then see inside the images, and any ``<img`` left over is
    not one the renderer made.
    """
    return _SVG_IMAGE.sub(lambda match: base64.b64decode(match[1]).decode(), markup)
