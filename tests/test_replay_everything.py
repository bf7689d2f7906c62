"""The whole loop with a server no one here wrote: ``@modelcontextprotocol/server-everything``.

Record it over stdio, stop it, replay the recording (to mcp_nb over stdio, to
the official SDK over Streamable HTTP), diff it against the lab server, export
the session as tests and run them green against the recording.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from http_support import install_everything
from test_replay import replay_command, replay_http

from mcp_nb.client import ClientSession, lab_command
from mcp_nb.recording import load, save
from mcp_nb.recording.diff import diff_recordings
from mcp_nb.recording.export import export_tests
from mcp_nb.transports import StdioTransport

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "a recorded reply"},
           "model": "test-model", "stopReason": "endTurn"}
ROOTS = {"roots": [{"uri": "file:///srv/project", "name": "project"}]}
#: (tool, arguments) called in the recorded session, in order.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"message": "hello replay"}),
    ("get-sum", {"a": 2, "b": 3}),
    ("get-structured-content", {"location": "Chicago"}),
    ("get-tiny-image", {}),
    ("trigger-sampling-request", {"prompt": "write a haiku", "maxTokens": 20}),
]
LONG_RUNNING = ("trigger-long-running-operation", {"duration": 1, "steps": 3})


def handlers(sampled: dict[str, Any] = SAMPLED) -> dict[str, Any]:
    return {"on_sampling": lambda params: sampled, "on_roots": lambda params: ROOTS}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """server-everything recorded over stdio, then stopped; what each call answered."""
    entry = install_everything()
    node = shutil.which("node")
    assert node is not None
    path = tmp_path_factory.mktemp("everything") / "everything.jsonl"
    answers: dict[str, Any] = {}

    async def record() -> None:
        transport = StdioTransport([node, str(entry), "stdio"])
        async with ClientSession(transport, **handlers()) as session:
            await session.connect()
            answers["tools"] = [tool.name for tool in await session.list_tools()]
            await session.list_resources()
            await session.list_resource_templates()
            await session.list_prompts()
            for name, arguments in CALLS:
                answers[name] = (await session.call_tool(name, arguments)).model_dump(
                    exclude_none=True)
            answers["progress"] = []
            await session.call_tool(*LONG_RUNNING, on_progress=lambda p, total, message:
                                    answers["progress"].append((p, total)))
            answers["resource"] = await session.read_resource(
                "demo://resource/static/document/features.md")
            answers["prompt"] = await session.request(
                "prompts/get", {"name": "args-prompt", "arguments": {"city": "Paris"}})
            save(session, path)
        assert transport.returncode is not None  # the server is gone before any replay

    anyio.run(record)
    return {"path": path, **answers}


async def test_replay_answers_like_server_everything(recorded: dict[str, Any]) -> None:
    progress: list[tuple[float, float | None]] = []
    async with ClientSession(StdioTransport(replay_command(recorded["path"])),
                             **handlers()) as session:
        await session.connect()
        assert session.server_info is not None
        assert session.server_info.name == "mcp-servers/everything"
        assert [tool.name for tool in await session.list_tools()] == recorded["tools"]
        for name, arguments in CALLS:
            result = await session.call_tool(name, arguments)
            assert result.model_dump(exclude_none=True) == recorded[name], name
        await session.call_tool(*LONG_RUNNING,
                                on_progress=lambda p, total, message: progress.append((p, total)))
        assert await session.read_resource("demo://resource/static/document/features.md") == \
            recorded["resource"]
        prompt = await session.request("prompts/get", {"name": "args-prompt",
                                                       "arguments": {"city": "Paris"}})
        assert prompt == recorded["prompt"]
    assert progress == recorded["progress"] == [(1, 3), (2, 3), (3, 3)]
    assert session.findings == []


async def test_the_official_sdk_reads_the_replay_over_http(recorded: dict[str, Any]) -> None:
    from mcp.client.session import ClientSession as SdkSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    with replay_http(recorded["path"]) as url, anyio.fail_after(60):
        async with streamable_http_client(url) as (read, write), SdkSession(read, write) as sdk:
            initialized = await sdk.initialize()
            assert initialized.server_info.name == "mcp-servers/everything"
            listed = await sdk.list_tools()
            assert [tool.name for tool in listed.tools] == recorded["tools"]
            summed = await sdk.call_tool("get-sum", {"a": 2, "b": 3})
            assert summed.content[0].text == recorded["get-sum"]["content"][0]["text"]
            with pytest.raises(MCPError, match=r"arguments\.b: 3 → 4"):
                await sdk.call_tool("get-sum", {"a": 2, "b": 4})
            features = await sdk.read_resource("demo://resource/static/document/features.md")
            assert features.contents[0].text == recorded["resource"][0]["text"]


async def test_diff_against_the_lab_server(recorded: dict[str, Any], tmp_path: Path) -> None:
    async with ClientSession(StdioTransport(lab_command())) as lab:
        await lab.connect()
        await lab.list_tools()
        await lab.list_resources()
        await lab.list_resource_templates()
        await lab.list_prompts()
        await lab.call_tool("echo", {"text": "hello replay"})
        diff = diff_recordings(load(recorded["path"]), lab)
    text = diff.text()
    assert 'name: "mcp-servers/everything" → "mcp_nb-lab"' in text
    assert "- tools: get-sum removed" in text and "+ tools: add added" in text
    assert "~ tools: echo changed: " in text
    assert "inputSchema.properties.message: removed" in text
    assert "inputSchema.properties.text: added" in text
    assert "capabilities changed: tasks: removed" in text
    assert "- prompts: args-prompt removed" in text
    assert '< calls: tools/call get-sum {"a": 2, "b": 3} only before' in text
    assert '> calls: tools/call echo {"text": "hello replay"} only after' in text


def test_exported_tests_run_green_against_the_recording(recorded: dict[str, Any],
                                                         tmp_path: Path) -> None:
    test_file = tmp_path / "test_everything.py"
    count = export_tests(load(recorded["path"]), test_file)
    assert count == 4 + len(CALLS) + 3  # lists, calls, long-running, resource, prompt
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{count} passed" in result.stdout
