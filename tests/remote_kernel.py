"""Running notebooks on a Jupyter server that is somewhere else: REST plus the kernel websocket.

What JupyterLab does when a person opens a notebook, without the browser: read the notebook
through the contents API, start a kernel for it through the sessions API (so its working
folder is the notebook's), join the kernel's websocket and send each code cell as an
``execute_request``; a cell is done when its ``execute_reply`` has come and the kernel has gone
``idle`` for it. Everything goes over HTTP to the server's URL, so behind JupyterHub it goes
through the proxy to ``/user/NAME/``, as a person's traffic does.

nbclient runs a kernel it starts itself (over ZMQ, on the same machine); this speaks the
websocket protocol of Jupyter Server instead: JSON text frames with a ``channel`` key (the
protocol without a subprotocol; a frame with binary buffers, which only widget messages
carry, is not needed here and is skipped).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import anyio
import httpx
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

#: How long one cell may run (a loaded machine runs ten learners' kernels at once).
CELL_TIMEOUT = 240.0


@dataclass
class CellRun:
    """One code cell as the kernel ran it: what it showed, and its error if it failed."""

    source: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    #: The cell is tagged ``raises-exception``: its error is the lesson, and Run All goes on.
    raises: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None and not self.raises

    def text(self) -> str:
        """Everything the cell showed, as one string (streams, data, widget updates).

        A stream's messages are joined as a notebook shows them, with nothing between: the
        kernel sends stdout whenever its flush timer fires, so on a loaded machine one
        ``print`` can arrive in two messages, split mid-line."""
        parts: list[str] = []
        stream = None
        for output in self.outputs:
            content = output.get("content", {})
            if output.get("msg_type") == "stream":
                if stream == content.get("name") and parts:
                    parts[-1] += content.get("text", "")
                else:
                    parts.append(content.get("text", ""))
                stream = content.get("name")
                continue
            stream = None
            for value in content.get("data", {}).values():
                parts.append(value if isinstance(value, str) else json.dumps(value))
        return "\n".join(parts)


def _message(msg_type: str, content: dict[str, Any], session: str) -> dict[str, Any]:
    return {
        "header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "session": session,
                   "username": "", "version": "5.3",
                   "date": datetime.now(timezone.utc).isoformat()},
        "parent_header": {}, "metadata": {}, "content": content, "channel": "shell",
        "buffers": [],
    }


class RemoteKernel:
    """A kernel of the Jupyter server at ``base`` (``…/user/NAME/``), for one notebook.

    ``headers`` authenticate every request (``Authorization: token …``, or cookies).
    Open with :meth:`start`; :meth:`close` ends the kernel unless ``keep`` is asked for.
    """

    def __init__(self, http: httpx.AsyncClient, base: str, headers: dict[str, str]) -> None:
        self.http, self.base, self.headers = http, base.rstrip("/") + "/", headers
        self.session_id = self.kernel_id = ""
        self._client_session = uuid.uuid4().hex
        self._socket: WebSocketClientConnection | None = None
        self._waiting: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self, notebook_path: str) -> None:
        """A kernel for ``notebook_path`` (the sessions API, as JupyterLab opens a notebook)."""
        answer = await self.http.post(
            self.base + "api/sessions", headers=self.headers,
            json={"path": notebook_path, "name": notebook_path.rsplit("/", 1)[-1],
                  "type": "notebook", "kernel": {"name": "python3"}})
        answer.raise_for_status()
        model = answer.json()
        self.session_id, self.kernel_id = model["id"], model["kernel"]["id"]
        await self.attach()

    async def attach(self, kernel_id: str | None = None) -> None:
        """Join the websocket of this kernel (or of ``kernel_id``, one already running)."""
        self.kernel_id = kernel_id or self.kernel_id
        url = (self.base.replace("http://", "ws://", 1)
               + f"api/kernels/{self.kernel_id}/channels?session_id={self._client_session}")
        self._socket = await websocket_connect(
            # As patient as a browser: the server answers once the kernel is up, which on a
            # machine twenty learners share took over a minute (benchmarks/RESULTS.md).
            HTTPRequest(url, headers=self.headers, request_timeout=CELL_TIMEOUT),
            max_message_size=64 * 1024 * 1024)
        self._reader = asyncio.create_task(self._read())
        # The kernel may still be starting: its kernel_info reply says it is there.
        await self._request("kernel_info_request", {}, timeout=120)

    async def _read(self) -> None:
        assert self._socket is not None
        while (frame := await self._socket.read_message()) is not None:
            if isinstance(frame, bytes):
                continue  # a message with binary buffers (widgets'): not needed here
            message = json.loads(frame)
            queue = self._waiting.get(message.get("parent_header", {}).get("msg_id", ""))
            if queue is not None:
                queue.put_nowait(message)
        for queue in self._waiting.values():  # the socket closed: wake every waiter
            queue.put_nowait({"channel": "closed"})

    async def _request(self, msg_type: str, content: dict[str, Any], *, timeout: float,
                       on_message: Callable[[dict[str, Any]], None] | None = None,
                       ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send one shell request; return its reply and the iopub messages it caused."""
        assert self._socket is not None, "attach() first"
        request = _message(msg_type, content, self._client_session)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._waiting[request["header"]["msg_id"]] = queue
        reply: dict[str, Any] | None = None
        idle = False
        iopub: list[dict[str, Any]] = []
        try:
            await self._socket.write_message(json.dumps(request))
            with anyio.fail_after(timeout):
                while reply is None or not idle:
                    message = await queue.get()
                    if message["channel"] == "closed":
                        raise ConnectionError(f"the kernel websocket closed during {msg_type}")
                    if message["channel"] == "shell":
                        reply = message
                    elif message["channel"] == "iopub":
                        if message["msg_type"] == "status":
                            idle = message["content"]["execution_state"] == "idle"
                        else:
                            iopub.append(message)
                            if on_message is not None:
                                on_message(message)
        finally:
            self._waiting.pop(request["header"]["msg_id"], None)
        return reply, iopub

    async def execute(self, code: str, *, timeout: float = CELL_TIMEOUT,
                      on_message: Callable[[dict[str, Any]], None] | None = None) -> CellRun:
        """Run ``code`` as a cell; ``on_message`` sees each of its iopub messages as it comes
        (while the cell still runs: a person reacting to what the cell shows)."""
        reply, iopub = await self._request(
            "execute_request", {"code": code, "silent": False, "store_history": True,
                                "user_expressions": {}, "allow_stdin": False,
                                "stop_on_error": True},
            timeout=timeout, on_message=on_message)
        run = CellRun(code, [m for m in iopub if m["msg_type"] in (
            "stream", "display_data", "execute_result", "update_display_data", "error")])
        if reply["content"]["status"] != "ok":
            content = reply["content"]
            run.error = f"{content.get('ename', '?')}: {content.get('evalue', '')}"
        return run

    async def close(self, *, keep: bool = False) -> None:
        """Leave the websocket; end the kernel too (the notebook closed) unless ``keep``."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if not keep and self.session_id:
            await self.http.delete(self.base + f"api/sessions/{self.session_id}",
                                   headers=self.headers)


@dataclass(frozen=True)
class Cell:
    """A code cell to run: its source, and whether its error is expected."""

    source: str
    raises: bool = False


async def read_notebook(http: httpx.AsyncClient, base: str, headers: dict[str, str],
                        path: str) -> list[Cell]:
    """The code cells of notebook ``path`` on the server, read through its contents API."""
    answer = await http.get(base.rstrip("/") + f"/api/contents/{path}", headers=headers,
                            params={"content": "1", "type": "notebook"})
    answer.raise_for_status()
    return [Cell("".join(cell["source"]),
                 "raises-exception" in cell.get("metadata", {}).get("tags", []))
            for cell in answer.json()["content"]["cells"] if cell["cell_type"] == "code"]


async def run_cells(kernel: RemoteKernel, cells: Sequence[Cell], *,
                    on_message: Callable[[dict[str, Any]], None] | None = None,
                    ) -> list[CellRun]:
    """Run ``cells`` in order, stopping at the first that fails (as Run All does; a cell
    tagged ``raises-exception`` may fail, as in nbclient and JupyterLab)."""
    runs = []
    for cell in cells:
        run = await kernel.execute(cell.source, on_message=on_message)
        run.raises = cell.raises
        runs.append(run)
        if run.failed:
            break
    return runs
