"""Exporting a session as a pytest file: one test per call, the recorded outcome as the expectation.

The file runs against a replay of the recording by default, where it passes,
or against the live server with ``MCP_NB_TARGET=live`` (the recorded command
or URL, or ``MCP_NB_COMMAND`` / ``MCP_NB_URL``), where it fails with a
path-by-path diff when the server changed.  Tests run in the recorded order
on one session, so a server with state sees what it saw then.  The rules
(sessions, comparison, normalisers) live in :mod:`.checks`; the file holds data.

Example::

    export_tests(load("everything.jsonl"), "test_everything.py",
                 recording_path="everything.jsonl", normalizer="whitespace")
"""

from __future__ import annotations

import dataclasses
import os
import pprint
import re
import textwrap
from pathlib import Path
from typing import Any

from .checks import NORMALIZERS
from .diff import describe_call
from .format import Recording
from .script import MATCHED_BY_METHOD, Exchange, Script, comparable_params

#: Requests not exported: the handshake (the target session does its own) and liveness.
NOT_EXPORTED = frozenset({*MATCHED_BY_METHOD, "ping"})


def exported_calls(recording: Recording) -> list[Exchange]:
    """The answered requests worth a test, in the recorded order."""
    return [exchange for exchange in Script.from_recording(recording).exchanges
            if exchange.is_request and exchange.answered
            and exchange.trigger.method not in NOT_EXPORTED]


def _outcome(response: dict[str, Any]) -> dict[str, Any]:
    if "error" in response:
        error = response["error"]
        return {"error": {"code": error.get("code"), "message": error.get("message")}}
    return {"result": response.get("result")}


def _test_name(number: int, exchange: Exchange) -> str:
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", describe_call(exchange)).strip("_").lower()[:60]
    return f"test_{number:03d}_{slug}"


def _literal(value: Any, indent: int = 0) -> str:
    """A Python literal for a JSON value, wrapped to stay readable (continuation lines indented).

    >>> _literal({"ok": True, "none": None})
    "{'ok': True, 'none': None}"
    """
    text = pprint.pformat(value, width=96 - indent, sort_dicts=False)
    if "\n" not in text:
        return text
    return "(\n" + textwrap.indent(text, " " * (indent + 4)) + "\n" + " " * indent + ")"


def render_tests(recording: Recording, recording_path: str, *, normalizer: str = "exact") -> str:
    """The text of the pytest file (see :func:`export_tests`)."""
    if normalizer not in NORMALIZERS:
        raise ValueError(f"normalizer is one of {', '.join(NORMALIZERS)}, not {normalizer!r}")
    header = recording.header
    server = header.server_info or {}
    lines = [
        f'"""Regression tests exported by mcp_nb from {Path(recording_path).name}.',
        "",
        f"Server: {server.get('name', '?')} {server.get('version', '')}, {header.era} era, "
        f"protocol {header.protocol_version}; recorded {header.recorded_at or '(unknown)'}.",
        "Against the recording (a replay):  pytest THIS_FILE",
        "Against the live server:           MCP_NB_TARGET=live pytest THIS_FILE",
        "  (the recorded command or URL; MCP_NB_COMMAND or MCP_NB_URL to point elsewhere)",
        f'Text is compared "{normalizer}"; structured content and everything else exactly.',
        '"""',
        "",
        "from pathlib import Path",
        "",
        "import pytest",
        "",
        "from mcp_nb.recording.checks import Target, expect",
        "",
        f"RECORDING = str(Path(__file__).parent / {_literal(os.path.basename(recording_path))})",
        f"HEADER = {_literal(dataclasses.asdict(header))}",
        f"NORMALIZE = {normalizer!r}",
        "",
        "",
        '@pytest.fixture(scope="module")',
        "def server():",
        "    session = Target(RECORDING, HEADER).open()",
        "    yield session",
        "    session.close()",
    ]
    used: set[str] = set()
    for number, exchange in enumerate(exported_calls(recording), 1):
        message = exchange.trigger.message or {}
        response = exchange.response or {}
        name = _test_name(number, exchange)
        while name in used:
            name += "_"
        used.add(name)
        lines += [
            "",
            "",
            f"def {name}(server):",
            f"    # recorded on line {exchange.trigger.line}",
            f"    params = {_literal(comparable_params(message.get('params')), 4)}",
            f"    recorded = {_literal(_outcome(response), 4)}",
            f"    expect({describe_call(exchange)!r}, "
            f"server.outcome({message['method']!r}, params), recorded, NORMALIZE)",
        ]
    return "\n".join(lines) + "\n"


def export_tests(recording: Recording, output: str | os.PathLike[str], *,
                 recording_path: str | os.PathLike[str] | None = None,
                 normalizer: str = "exact") -> int:
    """Write the pytest file; returns how many tests it holds.

    The recording must sit next to the test file (it is found relative to it);
    ``recording_path`` (default: where the recording was loaded from) is copied
    there if it is elsewhere.  A recording captured in memory is written there
    as ``<test file's stem>.jsonl``.
    """
    output = Path(output)
    if recording_path is None and recording.source == "<memory>":
        recording_path = output.with_suffix(".jsonl")
    source = Path(recording_path or recording.source)
    beside = output.parent / source.name
    if not beside.exists() or not beside.samefile(source):
        if source.exists():
            beside.write_bytes(source.read_bytes())
        else:
            recording.write(beside)
    output.write_text(render_tests(recording, str(beside), normalizer=normalizer),
                      encoding="utf-8")
    return len(exported_calls(recording))
