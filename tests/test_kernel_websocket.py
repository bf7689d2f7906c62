"""The kit's server extension turns Nagle's algorithm off on Jupyter Server's kernel websockets.

A real Jupyter server (JupyterLab's) on loopback, a real kernel, a real websocket client
(tornado's): the extension's connection class reads ``TCP_NODELAY`` back from the socket it
set it on and logs it, so these tests see the socket option itself, not a flag of ours. A
class the user chose is kept; without the extension the one line of config does the same.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import LAB, JupyterServer, require_browser_stack

EXTENSION = "--ServerApp.jpserver_extensions={'mcp_nb.auth.jupyter': True}"
STOCK = "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection"
OURS = "mcp_nb.kernel_websocket.NoDelayKernelWebsocketConnection"


@pytest.fixture
def start(tmp_path: Path) -> Iterator[object]:
    servers: list[JupyterServer] = []
    require_browser_stack(LAB)

    def started(*options: str) -> JupyterServer:
        home = tmp_path / f"home{len(servers)}"
        root = tmp_path / f"root{len(servers)}"
        home.mkdir()
        root.mkdir()
        servers.append(JupyterServer(root, home, LAB, options=options))
        return servers[-1]

    yield started
    for server in servers:
        assert server.stop() == []


def _kernel_info_over_websocket(server: JupyterServer) -> str:
    """Start a kernel, open its websocket, ask kernel_info; the kernel's id."""
    kernel = json.loads(server._request("/api/kernels", method="POST"))["id"]

    async def exchange() -> None:
        from tornado.websocket import websocket_connect

        url = (f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels"
               f"?token={server.token}&session_id={uuid.uuid4().hex}")
        connection = await websocket_connect(url)
        message_id = uuid.uuid4().hex
        connection.write_message(json.dumps({
            "channel": "shell", "buffers": [], "metadata": {}, "content": {},
            "parent_header": {},
            "header": {"msg_id": message_id, "msg_type": "kernel_info_request",
                       "username": "test", "session": uuid.uuid4().hex, "version": "5.3",
                       "date": "2026-01-01T00:00:00Z"}}))
        while True:
            raw = await asyncio.wait_for(connection.read_message(), 60)
            assert raw is not None, "the kernel websocket closed"
            reply = json.loads(raw)
            if reply.get("parent_header", {}).get("msg_id") == message_id \
                    and reply["header"]["msg_type"] == "kernel_info_reply":
                break
        connection.close()

    asyncio.run(exchange())
    return str(kernel)


def test_the_extension_sets_tcp_nodelay_on_the_kernel_websocket(start: object) -> None:
    server = start(EXTENSION)  # type: ignore[operator]
    kernel = _kernel_info_over_websocket(server)
    log = server.log_path.read_text(errors="replace")
    assert f"kernel websockets use {OURS} (TCP_NODELAY)" in log
    # Read back from the socket by getsockopt, after tornado's set_nodelay.
    assert f"mcp_nb: kernel {kernel} websocket TCP_NODELAY=on" in log


def test_a_class_the_user_configured_is_kept(start: object) -> None:
    server = start(EXTENSION, f"--ServerApp.kernel_websocket_connection_class={STOCK}")  # type: ignore[operator]
    kernel = _kernel_info_over_websocket(server)
    log = server.log_path.read_text(errors="replace")
    assert "kernel websocket TCP_NODELAY not applied: ServerApp.kernel_websocket_connection_" \
           "class is set in the configuration" in log
    assert f"kernel {kernel} websocket TCP_NODELAY" not in log


def test_the_one_line_of_config_works_without_the_extension(start: object) -> None:
    server = start(f"--ServerApp.kernel_websocket_connection_class={OURS}")  # type: ignore[operator]
    kernel = _kernel_info_over_websocket(server)
    log = server.log_path.read_text(errors="replace")
    assert f"mcp_nb: kernel {kernel} websocket TCP_NODELAY=on" in log
    assert "kernel websockets use" not in log  # the extension did not run
