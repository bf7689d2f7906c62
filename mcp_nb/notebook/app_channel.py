"""The App channel: an App frame's messages between the page and the kernel, off the kernel's
shell channel.

Why: an App's ``tools/call`` sent as a widget message costs the page more than the wire.
The kernel publishes ``status: busy`` and ``status: idle`` around every widget message it
handles, and JupyterLab redraws its kernel indicators for each: a profile of the notebook
page during App round trips found its main thread busy about 14 ms per round trip, most of
it that redrawing and the layout it causes (benchmarks/RESULTS.md, "The App channel"). The
channel carries the frame's messages past all of that: no shell message, so no status; no
kernel message for JupyterLab to route; no widget message for ipywidgets to dispatch.

How, three pieces, each on its own side:

* the kernel (this module) listens on a Unix socket of its own, in a directory only its
  user can enter, and writes where, with a token, beside its connection file
  (``kernel-<id>.json`` → ``kernel-<id>.json.mcp_nb-apps``, owner-only);
* the kit's Jupyter server extension (:mod:`mcp_nb.app_channel_relay`) serves
  ``{base_url}mcp_nb/apps/channel/<kernel id>``, a websocket behind Jupyter's own login and
  its ``execute`` permission on kernels (as the kernel's own websocket), reads that file
  for the kernel it names, and passes lines both ways;
* the page (``app_frame.js``) opens one such websocket per kernel, and each App frame
  that finds it open when it is drawn sends everything through it, with the frame's
  id and a secret only the frame's widget state carries.

Each line is one JSON object: ``{"frame", "secret", "content"}`` from the page (content as
the page would send it as a widget message), ``{"frame", "content"}`` to it; and, as a frame's
widget is made, ``{"frame", "content": {"kind": "ahead", …}}`` to every page connected, so the
page can start the View before the widget reaches it (:meth:`AppChannel.ahead`). The kernel
handles a frame's lines in order on one thread of the channel's (the widget path's handler,
unchanged), and answers through the channel once the frame has spoken through it.

Nothing depends on it: no channel (the extension not enabled, a kernel on another machine, a
kernel that is not Jupyter's, ``MCP_NB_APP_LEVERS_OFF=channel``, a page that could not open
it) is the widget path as before. If the channel closes while an App is up, the frame goes on
with widget messages; what was in flight at that moment may arrive out of order.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hmac
import json
import logging
import os
import queue
import re
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: Beside the kernel's connection file: where its channel is, and the token it asks for.
CHANNEL_SUFFIX = ".mcp_nb-apps"
#: The longest line the channel takes (bytes): the page's proxy refuses an App's message over
#: 1 MiB, and a line also carries the frame's id and secret around it.
MAX_LINE = 2 * 1024 * 1024
#: The longest line the kernel sends a page (bytes): an App's answer can be large (a
#: resources/read of an image), and a longer one goes as a widget message instead, which
#: Jupyter Server passes whatever its size, rather than closing the page's channel.
MAX_TO_PAGE = 32 * 1024 * 1024
#: How Jupyter Server names a kernel's connection file.
CONNECTION_FILE = re.compile(r"^kernel-(?P<id>[0-9a-fA-F-]{36})\.json$")

Handler = Callable[[Mapping[str, Any]], None]


class _Frame:
    """One App frame known to the channel: its secret, what handles its lines, and the
    connection its page speaks through (None until the page's first line)."""

    def __init__(self, secret: str, handler: Handler) -> None:
        self.secret = secret
        self.handler = handler
        self.writer: asyncio.StreamWriter | None = None


class AppChannel:
    """The kernel's end of the channel: a Unix socket on the sessions' loop (see the module).

    Made by :func:`kernel_channel`; one per kernel process.
    """

    def __init__(self, loop: Any, connection_file: Path, kernel_id: str) -> None:
        self._loop = loop
        self.kernel_id = kernel_id
        self._frames: dict[str, _Frame] = {}
        #: The relay connections that presented the token (one per page showing this kernel).
        self._pages: set[asyncio.StreamWriter] = set()
        self._lock = threading.Lock()
        self._work: queue.SimpleQueue[tuple[Handler, Mapping[str, Any]]] = queue.SimpleQueue()
        self._directory = Path(tempfile.mkdtemp(prefix="mcp_nb-apps-"))  # 0700
        self.socket_path = self._directory / "channel.sock"
        self._token = secrets.token_urlsafe(32)
        self.channel_file = Path(str(connection_file) + CHANNEL_SUFFIX)
        self._server = loop.run(asyncio.start_unix_server(
            self._serve, path=str(self.socket_path), limit=MAX_LINE))
        os.chmod(self.socket_path, 0o600)
        descriptor = os.open(self.channel_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as written:
            json.dump({"path": str(self.socket_path), "token": self._token}, written)
        atexit.register(self.close)
        threading.Thread(target=self._handle, name="mcp_nb-app-channel", daemon=True).start()

    # -- the frames ------------------------------------------------------------------------

    def register(self, handler: Handler) -> dict[str, str]:
        """A new frame: what its widget carries to the page (kernel id, frame id, secret)."""
        frame, secret = secrets.token_hex(8), secrets.token_urlsafe(24)
        with self._lock:
            self._frames[frame] = _Frame(secret, handler)
        return {"kernel": self.kernel_id, "frame": frame, "secret": secret}

    def unregister(self, frame: str) -> None:
        with self._lock:
            self._frames.pop(frame, None)

    def bound(self, frame: str) -> bool:
        """Whether the frame's page speaks through the channel (so it is answered there)."""
        with self._lock:
            known = self._frames.get(frame)
            return known is not None and known.writer is not None

    def ahead(self, frame: str, content: Mapping[str, Any]) -> int:
        """Send ``content`` for ``frame`` to every page connected now, before the frame's
        widget reaches any (the page's ``prestart`` through the channel); how many pages."""
        with self._lock:
            pages = [page for page in self._pages if not page.is_closing()]
        line = json.dumps({"frame": frame, "content": content}, default=repr).encode() + b"\n"
        if len(line) > MAX_TO_PAGE:
            return 0  # the page starts it from the widget, as without the channel
        if pages and not self._loop.in_loop_thread():
            # Out on the socket before this thread goes on to make the frame's widget: queued
            # for the loop's thread instead, the line waited for the GIL while the widget was
            # serialized, and reached the page after the cell's whole burst of widget messages
            # (30 to 50 ms later; benchmarks/RESULTS.md, fourth pass).
            self._loop.run(self._push(pages, line))
        else:
            for page in pages:
                self._write(page, line)
        return len(pages)

    async def _push(self, pages: list[asyncio.StreamWriter], line: bytes) -> None:
        for page in pages:
            page.write(line)
        # A page that reads slowly costs the cell at most 50 ms; the rest follows on its own.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*(page.drain() for page in pages)), 0.05)

    def _write(self, writer: asyncio.StreamWriter, line: bytes) -> None:
        if self._loop.in_loop_thread():
            writer.write(line)
        else:
            self._loop.call_soon(writer.write, line)

    def send(self, frame: str, content: Mapping[str, Any]) -> bool:
        """Send ``content`` to the frame's page through the channel; False if it is not there."""
        with self._lock:
            known = self._frames.get(frame)
            writer = known.writer if known is not None else None
        if writer is None or writer.is_closing():
            return False
        line = json.dumps({"frame": frame, "content": content}, default=repr).encode() + b"\n"
        if len(line) > MAX_TO_PAGE:
            return False  # as a widget message
        self._write(writer, line)
        return True

    # -- the socket ------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One relay connection (one page): a token first, then the frames' lines."""
        try:
            first = json.loads(await reader.readline() or b"null")
            token = first.get("token") if isinstance(first, dict) else None
            if not isinstance(token, str) or not hmac.compare_digest(token, self._token):
                return
            with self._lock:
                self._pages.add(writer)
            while line := await reader.readline():
                self._receive(line, writer)
        except (ValueError, ConnectionError, asyncio.LimitOverrunError) as exc:
            log.debug("mcp_nb: an App channel connection ended: %s", exc)
        finally:
            with self._lock:
                self._pages.discard(writer)
                for known in self._frames.values():
                    if known.writer is writer:
                        known.writer = None  # back to widget messages
            writer.close()

    def _receive(self, line: bytes, writer: asyncio.StreamWriter) -> None:
        try:
            said = json.loads(line)
        except ValueError:
            return
        if not isinstance(said, dict) or not isinstance(said.get("content"), dict):
            return
        with self._lock:
            known = self._frames.get(said.get("frame"))  # type: ignore[arg-type]
            secret = said.get("secret")
            if known is None or not isinstance(secret, str) \
                    or not hmac.compare_digest(secret, known.secret):
                return
            known.writer = writer
        self._work.put((known.handler, said["content"]))

    def _handle(self) -> None:
        """The frames' lines, in the order they came, off the loop (a handler may wait on it)."""
        while True:
            handler, content = self._work.get()
            try:
                handler(content)
            except Exception:  # one App's bad turn must not end the channel for the others
                log.exception("mcp_nb: an App channel message could not be handled")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.channel_file.unlink()
        with contextlib.suppress(Exception):
            self._loop.call_soon(self._server.close)
        shutil.rmtree(self._directory, ignore_errors=True)


_channels: dict[int, AppChannel | None] = {}
_channels_lock = threading.Lock()


def kernel_channel(loop: Any) -> AppChannel | None:
    """This kernel's channel on ``loop`` (made on first use), or None where there can be none."""
    with _channels_lock:
        if id(loop) not in _channels:
            _channels[id(loop)] = _open_channel(loop)
        return _channels[id(loop)]


def _open_channel(loop: Any) -> AppChannel | None:
    try:
        from ipykernel.connect import get_connection_file

        connection_file = Path(get_connection_file())
    except Exception:  # not in a kernel (a script, a test's shell)
        return None
    match = CONNECTION_FILE.match(connection_file.name)
    if match is None or not hasattr(asyncio, "start_unix_server"):
        return None  # not a kernel Jupyter Server started, or no Unix sockets here
    sweep_stale_channels(connection_file.parent)
    try:
        return AppChannel(loop, connection_file, match["id"])
    except OSError as exc:
        log.warning("mcp_nb: no App channel (%s); App frames use widget messages", exc)
        return None


def sweep_stale_channels(runtime: Path) -> int:
    """Remove what kernels that died without exiting (SIGKILL, the OOM killer) left in
    ``runtime``: a channel file whose kernel's connection file is gone (Jupyter Server removes
    that one when it sees its kernel die), and the socket directory it names. Returns how many
    channel files were removed. Only directories of ours, owned by this user, are touched."""
    removed = 0
    for channel_file in runtime.glob(f"kernel-*.json{CHANNEL_SUFFIX}"):
        if Path(str(channel_file)[:-len(CHANNEL_SUFFIX)]).exists():
            continue  # its kernel may well be running
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            socket_dir = Path(json.loads(channel_file.read_text(encoding="utf-8"))["path"]).parent
            if (socket_dir.is_absolute() and socket_dir.name.startswith("mcp_nb-apps-")
                    and socket_dir.stat().st_uid == os.getuid()):
                shutil.rmtree(socket_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            channel_file.unlink()
            removed += 1
    return removed
