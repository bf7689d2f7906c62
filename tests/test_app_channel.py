"""The kernel's end of the App channel (:mod:`mcp_nb.notebook.app_channel`), over a real Unix
socket.

What a relay must present (the token from the channel file), what a frame's line must carry (its
id and secret), the order lines are handled in, when the kernel answers through the channel
(only once the frame's page spoke through it), and what is left behind (nothing). The whole
path through Jupyter Server and a browser is ``tests/test_apps_channel_browser.py``.
"""

from __future__ import annotations

import asyncio
import json
import stat
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_nb.notebook import app_channel
from mcp_nb.notebook.app_channel import CHANNEL_SUFFIX, AppChannel, kernel_channel
from mcp_nb.notebook.loop import BackgroundLoop

pytestmark = pytest.mark.skipif(not hasattr(asyncio, "start_unix_server"),
                                reason="the App channel needs Unix sockets")


@pytest.fixture
def loop() -> Iterator[BackgroundLoop]:
    running = BackgroundLoop("test-app-channel")
    yield running
    running.stop()


@pytest.fixture
def channel(loop: BackgroundLoop, tmp_path: Path) -> Iterator[AppChannel]:
    kernel = str(uuid.uuid4())
    made = AppChannel(loop, tmp_path / f"kernel-{kernel}.json", kernel)
    yield made
    made.close()


class Relay:
    """What the server extension does: connect, present a token, pass lines."""

    def __init__(self, loop: BackgroundLoop, channel: AppChannel, token: str | None = None) -> None:
        self.loop = loop
        said = json.loads(channel.channel_file.read_text())
        self.reader, self.writer = loop.run(asyncio.open_unix_connection(said["path"]))
        self.line({"token": token if token is not None else said["token"]})

    def line(self, value: Any) -> None:
        text = value if isinstance(value, str) else json.dumps(value)
        self.writer.write(text.encode() + b"\n")
        self.loop.run(self.writer.drain())

    def read(self, timeout: float = 10) -> Any:
        line = self.loop.run(asyncio.wait_for(self.reader.readline(), timeout))
        return json.loads(line) if line else None

    def close(self) -> None:
        self.writer.close()


def _handler() -> tuple[list[Any], threading.Event, Any]:
    """A frame's handler: what it got, (content, the thread's name), and an event per line."""
    got: list[Any] = []
    arrived = threading.Event()

    def handle(content: Any) -> None:
        got.append((content, threading.current_thread().name))
        arrived.set()

    return got, arrived, handle


def _wait_for(got: list[Any], count: int) -> None:
    for _ in range(1000):
        if len(got) >= count:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"only {len(got)} of {count} lines handled: {got}")


def test_the_channel_file_and_socket_are_the_kernel_users_alone(channel: AppChannel) -> None:
    said = json.loads(channel.channel_file.read_text())
    assert set(said) == {"path", "token"} and len(said["token"]) >= 32
    assert channel.channel_file.name.endswith(".json" + CHANNEL_SUFFIX)
    assert stat.S_IMODE(channel.channel_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(said["path"]).stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(said["path"]).parent.stat().st_mode) == 0o700


def test_a_frames_lines_reach_its_handler_in_order_on_the_channels_thread(
        loop: BackgroundLoop, channel: AppChannel) -> None:
    got, _arrived, handle = _handler()
    route = channel.register(handle)
    assert route["kernel"] == channel.kernel_id and route["frame"] and route["secret"]
    relay = Relay(loop, channel)
    for number in range(20):
        relay.line({"frame": route["frame"], "secret": route["secret"],
                    "content": {"kind": "frame", "n": number}})
    _wait_for(got, 20)
    assert [content["n"] for content, _thread in got] == list(range(20))
    assert {thread for _content, thread in got} == {"mcp_nb-app-channel"}
    relay.close()


def test_a_wrong_token_secret_or_frame_is_never_handled(
        loop: BackgroundLoop, channel: AppChannel) -> None:
    got, _arrived, handle = _handler()
    route = channel.register(handle)
    line = {"frame": route["frame"], "secret": route["secret"], "content": {"kind": "frame"}}
    impostor = Relay(loop, channel, token="not the token")
    impostor.line(line)
    assert impostor.read() is None  # the kernel hung up on it
    relay = Relay(loop, channel)
    relay.line({**line, "secret": "not the secret"})
    relay.line({**line, "frame": "0123456789abcdef"})
    relay.line("{not json")
    relay.line({**line, "content": "not an object"})
    relay.line({**line, "content": {"kind": "frame", "last": True}})  # the one that counts
    _wait_for(got, 1)
    assert [content for content, _thread in got] == [{"kind": "frame", "last": True}]
    assert not channel.bound("0123456789abcdef")
    relay.close()


def test_the_kernel_answers_through_the_channel_once_the_page_spoke_through_it(
        loop: BackgroundLoop, channel: AppChannel) -> None:
    got, _arrived, handle = _handler()
    route = channel.register(handle)
    assert not channel.bound(route["frame"])
    assert channel.send(route["frame"], {"kind": "frame", "message": {"id": 1}}) is False
    relay = Relay(loop, channel)
    relay.line({"frame": route["frame"], "secret": route["secret"],
                "content": {"kind": "created"}})
    _wait_for(got, 1)
    assert channel.bound(route["frame"])
    assert channel.send(route["frame"], {"kind": "frame", "message": {"id": 1}}) is True
    assert relay.read() == {"frame": route["frame"],
                            "content": {"kind": "frame", "message": {"id": 1}}}
    # The page's connection goes: widget messages again.
    relay.close()
    for _ in range(1000):
        if not channel.bound(route["frame"]):
            break
        threading.Event().wait(0.01)
    assert not channel.bound(route["frame"])
    assert channel.send(route["frame"], {"kind": "frame"}) is False
    # A frame unregistered (its widget closed) is not handled any more.
    channel.unregister(route["frame"])
    again = Relay(loop, channel)
    again.line({"frame": route["frame"], "secret": route["secret"], "content": {"kind": "x"}})
    again.line({"token": "a line of nothing, to be sure the one before was read"})
    threading.Event().wait(0.2)
    assert len(got) == 1
    again.close()


def test_an_answer_too_long_for_the_channel_goes_as_a_widget_message(
        loop: BackgroundLoop, channel: AppChannel, monkeypatch: pytest.MonkeyPatch) -> None:
    got, _arrived, handle = _handler()
    route = channel.register(handle)
    relay = Relay(loop, channel)
    relay.line({"frame": route["frame"], "secret": route["secret"], "content": {"kind": "x"}})
    _wait_for(got, 1)
    monkeypatch.setattr(app_channel, "MAX_TO_PAGE", 1000)
    big = {"kind": "frame", "message": {"id": 1, "result": {"text": "x" * 2000}}}
    assert channel.send(route["frame"], big) is False  # the caller sends it as a widget message
    assert channel.ahead(route["frame"], {"kind": "ahead", "html": "x" * 2000}) == 0
    small = {"kind": "frame", "message": {"id": 2, "result": {}}}
    assert channel.send(route["frame"], small) is True
    assert relay.read() == {"frame": route["frame"], "content": small}  # the channel goes on
    relay.close()


def test_a_handler_that_fails_does_not_end_the_channel(
        loop: BackgroundLoop, channel: AppChannel) -> None:
    got, _arrived, handle = _handler()

    def fails(content: Any) -> None:
        raise RuntimeError("an App's bad turn")

    bad, good = channel.register(fails), channel.register(handle)
    relay = Relay(loop, channel)
    relay.line({"frame": bad["frame"], "secret": bad["secret"], "content": {"kind": "x"}})
    relay.line({"frame": good["frame"], "secret": good["secret"], "content": {"kind": "y"}})
    _wait_for(got, 1)
    assert got[0][0] == {"kind": "y"}
    relay.close()


def test_closing_leaves_nothing_behind(loop: BackgroundLoop, tmp_path: Path) -> None:
    kernel = str(uuid.uuid4())
    made = AppChannel(loop, tmp_path / f"kernel-{kernel}.json", kernel)
    directory = made.socket_path.parent
    made.close()
    assert not made.channel_file.exists() and not directory.exists()


def test_outside_a_jupyter_kernel_there_is_no_channel(loop: BackgroundLoop) -> None:
    assert kernel_channel(loop) is None


def test_what_a_killed_kernel_left_is_swept_by_the_next(loop: BackgroundLoop,
                                                        tmp_path: Path) -> None:
    running, killed = str(uuid.uuid4()), str(uuid.uuid4())
    (tmp_path / f"kernel-{running}.json").write_text("{}")  # Jupyter removes a dead one's
    alive = AppChannel(loop, tmp_path / f"kernel-{running}.json", running)
    left = AppChannel(loop, tmp_path / f"kernel-{killed}.json", killed)  # never closed
    # A channel file that names a directory not of ours: the file goes, the directory stays.
    elsewhere = tmp_path / "not-ours"
    elsewhere.mkdir()
    (tmp_path / f"kernel-{uuid.uuid4()}.json{CHANNEL_SUFFIX}").write_text(
        json.dumps({"path": str(elsewhere / "channel.sock"), "token": "x"}))
    try:
        assert app_channel.sweep_stale_channels(tmp_path) == 2
        assert not left.channel_file.exists() and not left.socket_path.parent.exists()
        assert alive.channel_file.exists() and alive.socket_path.exists()
        assert elsewhere.is_dir()
    finally:
        alive.close()
        left.close()
