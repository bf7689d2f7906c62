"""The Jupyter-server callback: a real Jupyter server with the extension gets the redirect."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from http_support import lab_server

from mcp_nb.auth import JupyterServerCallback, OAuth
from mcp_nb.client import ClientSession
from mcp_nb.transports import http_transport

TOKEN = "jupyter-test-token"
BASE_URL = "/user/ada/"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def jupyter_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Jupyter server with the extension under a JupyterHub-like base URL; its public URL."""
    runtime = tmp_path / "runtime"
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}", "--allow-root",
         f"--ServerApp.base_url={BASE_URL}", "--ServerApp.port_retries=0",
         "--ServerApp.jpserver_extensions={'mcp_nb.auth.jupyter': True}"],
        cwd=tmp_path, env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}{BASE_URL}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "api/status", headers={"Authorization": f"token {TOKEN}"}
                             ).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_redirect_comes_back_through_the_jupyter_server(jupyter_server: str) -> None:
    landed: list[int] = []

    def person(url: str) -> None:
        """Click the link in the browser that shows the notebook (logged in to Jupyter)."""
        location = httpx.get(url, follow_redirects=False).headers["location"]
        assert location.startswith(jupyter_server + "mcp_nb/oauth/callback?")
        landed.append(httpx.get(location, headers={"Authorization": f"token {TOKEN}"}
                                ).status_code)

    def show(text: str) -> None:
        threading.Thread(target=person, args=(text.split()[-1],), daemon=True).start()

    callback = JupyterServerCallback(jupyter_server, show=show, wait=60)
    auth = OAuth(callback=callback)
    with lab_server("--auth") as lab:
        async def use() -> None:
            async with ClientSession(http_transport(lab.ready_text, auth=auth)) as session:
                await session.connect()
                assert (await session.call_tool("add", {"a": 1, "b": 2})).text == "3"
        anyio.run(use)
    assert landed == [200]
    assert auth.describe()["callback"] == "jupyter-server"


def test_the_callback_route_wants_a_jupyter_login(jupyter_server: str) -> None:
    answer = httpx.get(jupyter_server + "mcp_nb/oauth/callback?code=c&state=s",
                       follow_redirects=False)
    assert answer.status_code in (302, 403)
