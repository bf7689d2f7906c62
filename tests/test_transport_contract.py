"""The transport contract: every transport class decides every member, every wrapper forwards.

The session uses a transport only through :class:`~mcp_nb.transports.Transport`'s
members.  A wrapper that forgot one used to degrade silently (the auto HTTP
transport had no ``set_param_headers``, so ``%mcp connect URL`` sent no
``Mcp-Param-*`` headers); these tests walk every transport class in the package
and fail on a member left undecided, then check that the auto transport really
hands each ability to the transport it wraps.
"""

from __future__ import annotations

import importlib
import pkgutil

import httpx
import pytest

import mcp_nb
from mcp_nb.client import ClientSession
from mcp_nb.protocol.tool_headers import HeaderAnnotation
from mcp_nb.transports import AutoHttpTransport, http_transport
from mcp_nb.transports.base import (
    ABILITIES,
    CONTRACT,
    Transport,
    TransportWrapper,
    contract_problems,
)


def _every_transport_class() -> list[type[Transport]]:
    """Every subclass of Transport defined anywhere in mcp_nb (entry points left out)."""
    for module in pkgutil.walk_packages(mcp_nb.__path__, "mcp_nb."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found: list[type[Transport]] = []
    pending = list(Transport.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__module__.startswith("mcp_nb.") and cls not in found:
            found.append(cls)
        pending.extend(cls.__subclasses__())
    return sorted(found, key=lambda cls: cls.__qualname__)


TRANSPORT_CLASSES = _every_transport_class()


def test_the_walk_finds_the_transports_users_meet():
    names = {cls.__name__ for cls in TRANSPORT_CLASSES}
    assert {"StdioTransport", "StreamableHttpTransport", "SseTransport",
            "AutoHttpTransport"} <= names


@pytest.mark.parametrize("cls", TRANSPORT_CLASSES, ids=lambda cls: cls.__qualname__)
def test_every_transport_decides_every_member(cls):
    assert contract_problems(cls) == []


def test_the_wrapper_base_forwards_the_whole_contract():
    # So a wrapper built on it cannot forget a member, even one added later.
    assert contract_problems(TransportWrapper) == []
    assert set(vars(TransportWrapper)) >= CONTRACT


def test_the_check_catches_a_transport_that_leaves_a_member_undecided():
    class Handmade(Transport):
        kind = "handmade"

        async def start(self, task_group, emit): ...
        async def send(self, frame): ...
        async def receive(self): return b""
        async def close(self): ...
        def set_protocol_version(self, version): ...
        def describe_exit(self): ...
        def describe_target(self): return {"kind": self.kind}

    problems = contract_problems(Handmade)
    assert problems == [f"{Handmade.__qualname__} neither implements {member!r} nor names it "
                        "in lacks" for member in sorted(ABILITIES)]

    class Contradictory(Handmade):
        lacks = frozenset({"send_nowait", "teleport"})

        def send_nowait(self, frame):
            return False

    problems = contract_problems(Contradictory)
    assert f"{Contradictory.__qualname__} implements 'send_nowait' yet says it lacks it" \
        in problems
    assert f"{Contradictory.__qualname__}.lacks names 'teleport', which is not an optional " \
        "ability" in problems


def test_the_auto_transport_hands_every_ability_to_the_one_it_wraps():
    auth = httpx.BasicAuth("user", "secret")
    auto = http_transport("http://127.0.0.1:9/mcp", auth=auth, max_message_bytes=4096)
    assert isinstance(auto, AutoHttpTransport)
    inner = auto.active
    annotations = (HeaderAnnotation(name="Region", path=("region",)),)
    auto.set_param_headers("lookup", annotations)
    assert inner._param_annotations == {"lookup": annotations}
    assert auto.auth is auth is inner.auth
    assert auto.max_message_bytes == inner.max_message_bytes == 4096
    assert auto.stderr_tail == ()
    assert auto.take_frames_inline(lambda frame: False) is False
    assert auto.describe_target() == {"kind": "streamable-http", "url": inner.url, "headers": {}}
    with pytest.raises(Exception, match="closed"):  # not started: refused as send() would be
        auto.send_nowait(b"{}")


def test_a_session_refuses_what_is_not_a_transport():
    class LooksLikeOne:
        kind = "duck"

    with pytest.raises(TypeError, match="subclass Transport"):
        ClientSession(LooksLikeOne())  # type: ignore[arg-type]
