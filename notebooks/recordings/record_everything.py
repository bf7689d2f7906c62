"""Record ``@modelcontextprotocol/server-everything`` (npm) into ``everything.jsonl`` here.

Notebook 12 replays that recording, so it runs where Node is missing (Binder).
This is how the file was made; run it again (from the repository root, with
``node`` and ``npm`` on PATH) to record a newer server::

    python notebooks/recordings/record_everything.py

The server is installed into the repository's ignored ``.cache/`` at the
version the tests pin, and started from the repository root with a relative
path, so the recording names no directory of this machine.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

from mcp_nb.client import ClientSession
from mcp_nb.recording import save
from mcp_nb.transports import StdioTransport

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from http_support import EVERYTHING_CACHE, EVERYTHING_PACKAGE, install_everything  # noqa: E402

#: What the recorded client answers when the server asks it to sample.
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Leaves drift on the pond"},
           "model": "a-recorded-model", "stopReason": "endTurn"}


async def record(path: Path) -> None:
    install_everything()
    entry = (EVERYTHING_CACHE / "node_modules" / EVERYTHING_PACKAGE / "dist" / "index.js")
    transport = StdioTransport(["node", os.path.relpath(entry, ROOT), "stdio"])
    async with ClientSession(transport, on_sampling=lambda params: SAMPLED) as session:
        await session.connect()
        await session.list_tools()
        await session.list_resources()
        await session.list_resource_templates()
        await session.list_prompts()
        await session.call_tool("echo", {"message": "hello from a recording"})
        await session.call_tool("get-sum", {"a": 19, "b": 23})
        await session.call_tool("get-structured-content", {"location": "Chicago"})
        await session.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 4},
                                on_progress=lambda *progress: None)
        await session.call_tool("trigger-sampling-request",
                                {"prompt": "a haiku about replays", "maxTokens": 30})
        await session.read_resource("demo://resource/static/document/features.md")
        await session.request("prompts/get", {"name": "args-prompt",
                                              "arguments": {"city": "Lisbon"}})
        count = save(session, path)
    print(f"recorded {count} records into {path.relative_to(ROOT)}")


if __name__ == "__main__":
    os.chdir(ROOT)  # the server's path is relative to the repository, and so is its cwd
    anyio.run(record, Path(__file__).with_name("everything.jsonl"))
