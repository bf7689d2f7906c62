"""x-mcp-header (2026-07-28, SEP-2243): the rules, the value encoding, and a real HTTP round trip.

The pure part (:mod:`mcp_nb.protocol.tool_headers`) is checked case by case
against the spec's constraints; the session part against a real HTTP server
(tests/peers/stateless_stub.py) that reports the headers it received.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from http_support import ServerProcess
from hypothesis import given
from hypothesis import strategies as st

from mcp_nb.client import ClientSession, EraProbeFailed
from mcp_nb.protocol.errors import UnsupportedProtocolVersionError
from mcp_nb.protocol.tool_headers import (
    encode_value,
    header_annotations,
    header_problems,
    param_headers,
)
from mcp_nb.transports import StreamableHttpTransport

STUB = Path(__file__).resolve().parent / "peers" / "stateless_stub.py"


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def annotated(kind: Any, header: Any) -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": header}


@pytest.mark.parametrize(("bad", "why"), [
    (schema(v=annotated("string", "")), "is empty"),
    (schema(v=annotated("string", 7)), "not a string"),
    (schema(v=annotated("object", "Data")), "type object"),
    (schema(v=annotated("array", "Items")), "type array"),
    (schema(v=annotated("null", "Nil")), "type null"),
    (schema(v=annotated("number", "Score")), "type number"),
    (schema(v={"x-mcp-header": "Untyped"}), "has no type"),
    (schema(a=annotated("string", "Region"), b=annotated("string", "Region")), "repeats"),
    (schema(a=annotated("string", "Region"), b=annotated("string", "REGION")), "repeats"),
    (schema(v=annotated("string", "My Region")), "a space"),
    (schema(v=annotated("string", "Region:1")), "':'"),
    (schema(v=annotated("string", "Régión")), "U+00E9"),
    (schema(v=annotated("string", "Reg\nion")), "U+000A"),
    (schema(v={"type": "array", "items": annotated("string", "Item")}), "properties alone"),
    (schema(v={"anyOf": [annotated("string", "Choice")]}), "properties alone"),
    ({"$defs": {"d": annotated("string", "Def")}, "properties": {"v": {"$ref": "#/$defs/d"}}},
     "properties alone"),
    ({"type": "string", "x-mcp-header": "Root"}, "the schema root"),
])
def test_each_broken_rule_is_named(bad: dict[str, Any], why: str) -> None:
    problems = header_problems(bad)
    assert len(problems) == 1
    assert why in problems[0]


def test_valid_annotations_and_where_their_values_sit() -> None:
    good = schema(
        region=annotated("string", "Region"),
        limit=annotated("integer", "Limit"),
        dry=annotated(["boolean", "null"], "Dry-Run"),  # nullable: null sends no header
        where={"type": "object", "properties": {"zone": annotated("string", "Zone")}},
        query={"type": "string"},
        **{"x-mcp-header": {"type": "string"}},  # a parameter *named* x-mcp-header
    )
    assert header_problems(good) == []
    assert [(a.header, a.path) for a in header_annotations(good)] == [
        ("Mcp-Param-Region", ("region",)), ("Mcp-Param-Limit", ("limit",)),
        ("Mcp-Param-Dry-Run", ("dry",)), ("Mcp-Param-Zone", ("where", "zone"))]
    headers = param_headers(header_annotations(good), {
        "region": "us-west1", "limit": -7, "dry": None, "where": {"zone": "b"}, "query": "q"})
    assert headers == {"Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "-7",
                       "Mcp-Param-Zone": "b"}
    assert param_headers(header_annotations(good), {}) == {}
    assert header_problems({"type": "object"}) == header_problems(None) == []


@pytest.mark.parametrize(("value", "sent"), [
    ("us-west1", "us-west1"),
    ("us west 1", "us west 1"),
    ("", ""),
    (42, "42"),
    (True, "true"),
    (False, "false"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
])
def test_values_are_encoded_as_the_spec_says(value: Any, sent: str) -> None:
    assert encode_value(value) == sent


def test_an_integer_beyond_the_safe_range_is_refused() -> None:
    assert encode_value(2**53 - 1) == str(2**53 - 1)
    with pytest.raises(ValueError, match="outside the range"):
        encode_value(2**53)


@given(st.text())
def test_every_string_becomes_a_safe_header_that_decodes_back(text: str) -> None:
    sent = encode_value(text)
    assert all(" " <= ch <= "~" for ch in sent)
    assert sent == sent.strip(" ")
    match = re.fullmatch(r"=\?base64\?(.*)\?=", sent)
    decoded = base64.b64decode(match.group(1)).decode("utf-8", "surrogatepass") if match \
        else sent
    assert decoded == text


# -- against a real HTTP server ------------------------------------------------------------------

TOOLS = [
    {"name": "query", "inputSchema": schema(region=annotated("string", "Region"),
                                             sql={"type": "string"})},
    {"name": "broken", "inputSchema": schema(n=annotated("number", "N"))},
    {"name": "plain", "inputSchema": schema()},
]


@contextlib.contextmanager
def stub(**refusals: int) -> Iterator[str]:
    """The stub server; ``refusals`` maps a method (``/`` written ``_``) to refusals of it."""
    refused = {method.replace("_", "/"): count for method, count in refusals.items()}
    server = ServerProcess([sys.executable, str(STUB), json.dumps(TOOLS), json.dumps(refused)],
                           re.compile(r"listening on (http://\S+)"))
    try:
        yield server.ready_text
    finally:
        server.stop()


@pytest.mark.anyio
async def test_invalid_tools_are_dropped_and_annotated_arguments_become_headers() -> None:
    with stub() as url:
        async with ClientSession(StreamableHttpTransport(url)) as session:
            await session.connect(era="stateless")
            with anyio.fail_after(20):
                tools = await session.list_tools()
                assert [t.name for t in tools] == ["query", "plain"]
                seen = json.loads((await session.call_tool(
                    "query", {"region": "Zürich", "sql": "SELECT 1"})).text)
                plain = json.loads((await session.call_tool("plain")).text)
        dropped = [f for f in session.findings if f.rule.id == "tool-header-invalid"]
        assert len(dropped) == 1
        assert "'broken'" in dropped[0].detail and "type number" in dropped[0].detail
        assert dropped[0].rule.kind == "spec"
        headers = {name.lower(): value for name, value in seen.items()}
        assert headers["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
        assert headers["mcp-name"] == "query"
        assert not any(name.lower().startswith("mcp-param-") for name in plain)
        shown = [str(e.text) for e in session.transcript.events("http")]
        assert any("tools/call" in text and "Mcp-Param-Region" in text for text in shown)


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["server_discover", "tools_list"])
async def test_a_refusal_listing_the_offered_version_is_retried_once_at_it(method: str) -> None:
    with stub(**{method: 1}) as url:
        async with ClientSession(StreamableHttpTransport(url)) as session:
            with anyio.fail_after(20):
                await session.connect(era="stateless")
                assert [t.name for t in await session.list_tools()] == ["query", "plain"]
        assert session.negotiated_version == "2026-07-28"
        said = " ".join(step.detail for step in session.era_steps)
        assert "2026-07-28 although it lists it" in said


@pytest.mark.anyio
async def test_a_probe_refused_twice_at_a_listed_version_says_so() -> None:
    with stub(server_discover=2) as url:
        async with ClientSession(StreamableHttpTransport(url)) as session:
            with anyio.fail_after(20), pytest.raises(EraProbeFailed) as caught:
                await session.connect(era="stateless")
    assert "refused server/discover at 2026-07-28 again, although it lists" in str(caught.value)
    assert "none of which" not in str(caught.value)


@pytest.mark.anyio
async def test_a_request_refused_twice_at_a_listed_version_says_so() -> None:
    with stub(tools_list=2) as url:
        async with ClientSession(StreamableHttpTransport(url)) as session:
            await session.connect(era="stateless")
            with anyio.fail_after(20), pytest.raises(UnsupportedProtocolVersionError) as caught:
                await session.list_tools()
    text = str(caught.value)
    assert "although it lists it among the versions it supports (2026-07-28)" in text
    assert "none of which" not in text and "this client speaks" not in text
