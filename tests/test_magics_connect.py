"""%mcp connect as a newcomer meets it: expansion, programs that cannot run, failed connects,
names reused — against real servers and a real refused port."""

from __future__ import annotations

import json
import os
import socket
import sys

import pytest

from mcp_nb.notebook.magics import McpCellError
from mcp_nb.protocol import State


@pytest.fixture
def namespace(ip):
    """Variables the test puts in the notebook's namespace, removed afterwards."""
    added: list[str] = []

    def put(**values):
        ip.user_ns.update(values)
        added.extend(values)

    yield put
    for name in added:
        ip.user_ns.pop(name, None)


def test_expressions_and_variables_expand_in_the_server_command(ip, mcp, namespace,
                                                                 tmp_path) -> None:
    namespace(sys=sys, workdir=str(tmp_path), level="debug")
    hosted = mcp("connect mine --cwd $workdir --env LEVEL=$level -- {sys.executable} "
                 "-m mcp_nb.lab")
    assert hosted.session.state is State.OPERATING
    command = hosted.session.transport.command
    assert command[:3] == [sys.executable, "-m", "mcp_nb.lab"]
    assert hosted.session.transport.cwd == str(tmp_path)
    assert hosted.session.transport.env["LEVEL"] == "debug"


def test_json_handed_to_a_server_and_literal_braces_stay_as_written(mcp, namespace) -> None:
    namespace(sys=sys)
    config = '{"a": 1}'
    hosted = mcp(f"connect literal --step -- {{sys.executable}} -m mcp_nb.lab --name "
                 f"x{{{{y}}}} '{config}'")
    assert hosted.session.transport.command[-3:] == ["--name", "x{y}", config]
    json.loads(hosted.session.transport.command[-1])


def test_an_undefined_expression_is_named(mcp) -> None:
    with pytest.raises(McpCellError, match=r"cannot expand '\{nowhere\.python\}': NameError"):
        mcp("connect broken -- {nowhere.python} server.py")


@pytest.mark.parametrize(("program", "why"), [
    ("/nonexistent/python", "not found"),
    ("does-not-exist-anywhere", "not found"),
    (__file__, "is not executable"),
])
def test_a_program_that_cannot_run_is_named_before_anything_starts(mcp, program, why) -> None:
    with pytest.raises(McpCellError) as raised:
        mcp(f"connect demo -- {program} server.py")
    message = str(raised.value)
    assert f"cannot start the server: {program} {why}" in message
    assert "{sys.executable}" in message  # a Python server: the kernel's interpreter
    assert "stdin" not in message


def test_a_refused_http_connection_says_could_not_connect(mcp) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    with pytest.raises(McpCellError, match=f"^could not connect to {url}: "):
        mcp(f"connect web {url}")


def test_a_failed_connect_leaves_the_current_session_and_nothing_half_open(mcp) -> None:
    first = mcp("connect first")
    from mcp_nb.notebook import manager

    magics = manager()
    before = dict(magics.sessions)
    with pytest.raises(McpCellError, match="ServerExited"):
        mcp(f"connect quitter -- {sys.executable} -c pass")
    assert magics.current == "first"
    failed = magics.sessions.pop("quitter")  # kept, ended, for its transcript
    assert failed.closed and magics.sessions == before
    assert first.session.state is State.OPERATING
    assert repr(mcp("tools")).startswith("7 tools")


def test_a_failed_connect_shuts_its_server_down(mcp, tmp_path) -> None:
    from mcp_nb.notebook import manager

    with pytest.raises(McpCellError, match=r"RequestTimeout|timed out"):
        mcp(f"connect mute --timeout 0.5 -- {sys.executable} -m mcp_nb.lab "
            "--never-answer=initialize")
    assert manager().current is None
    assert manager().sessions["mute"].closed
    assert manager().sessions["mute"].session.transport.returncode is not None


def test_reusing_a_name_replaces_the_session_and_says_so(mcp, capsys) -> None:
    old = mcp("connect twin")
    new = mcp("connect twin")
    out = capsys.readouterr().out
    assert "twin: replaces the earlier session of that name, now shut down (Terminated)" in out
    assert old.closed and not new.closed
    derived = mcp("connect")
    again = mcp("connect")
    out = capsys.readouterr().out
    assert derived.name == "lab" and again.name == "lab-2"
    assert "named lab-2: a session 'lab' is still open" in out


def test_a_foreign_python_on_path_gets_a_note(mcp, capsys, tmp_path, monkeypatch) -> None:
    fake = tmp_path / "python3"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    hosted = mcp(f"connect other --env PATH={tmp_path}{os.pathsep}{os.environ['PATH']} "
                 "-- python3 -m mcp_nb.lab")
    assert hosted.session.state is State.OPERATING
    out = capsys.readouterr().out
    assert f"note: python3 here is {fake}, not this kernel's Python" in out
