"""The lab server in isolation: a real subprocess spoken to line by line.

Each test plays the client by hand, writing JSON-RPC lines to the server's
stdin and reading its stdout through a pump thread, so every wait is bounded
and a misbehaving server fails a test instead of hanging it.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_nb.lab.content import HOSTILE, HOSTILE_TOOL_NAME
from mcp_nb.protocol.patience import with_answer_within
from mcp_nb.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS

pytestmark = pytest.mark.timeout(30)

ROOT = Path(__file__).resolve().parents[1]
#: Upper bound on any single wait; generous so a loaded CI machine does not flake.
TIMEOUT = 5.0
GARBAGE = b"lab server banner: not JSON\n"

Message = dict[str, Any]


class Lab:
    """A running lab server whose stdout and stderr are drained by pump threads."""

    def __init__(self, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_nb.lab", *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self._stdout: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[str] = []
        self._stderr_changed = threading.Condition()
        #: Messages that arrived while :func:`request` waited for its reply.
        self.seen: list[Message] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self._stdout.put(line)
        self._stdout.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in iter(self.proc.stderr.readline, b""):
            with self._stderr_changed:
                self._stderr.append(line.decode())
                self._stderr_changed.notify_all()

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Message) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def read_line(self, timeout: float = TIMEOUT) -> bytes | None:
        """The next raw stdout line, or ``None`` at EOF."""
        try:
            return self._stdout.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no stdout line within {timeout} s; stderr:\n{self.stderr}")

    def recv(self, timeout: float = TIMEOUT) -> Message:
        """The next stdout line, which must be one JSON object."""
        line = self.read_line(timeout)
        assert line is not None, f"server closed stdout; stderr:\n{self.stderr}"
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    def assert_silent(self, seconds: float) -> None:
        """Nothing at all arrives on stdout for ``seconds``."""
        try:
            line = self._stdout.get(timeout=seconds)
        except queue.Empty:
            return
        pytest.fail(f"expected silence, got {line!r}")

    def assert_stdout_closed(self) -> None:
        assert self.read_line() is None

    @property
    def stderr(self) -> str:
        with self._stderr_changed:
            return "".join(self._stderr)

    def wait_stderr(self, text: str, timeout: float = TIMEOUT) -> None:
        """Block until some stderr line contains ``text``."""
        with self._stderr_changed:
            found = self._stderr_changed.wait_for(
                lambda: any(text in line for line in self._stderr), timeout
            )
        assert found, f"{text!r} never appeared on stderr:\n{self.stderr}"

    def exit_code(self, timeout: float = TIMEOUT) -> int:
        return self.proc.wait(timeout=timeout)

    def assert_alive_after(self, seconds: float) -> None:
        time.sleep(seconds)
        assert self.proc.poll() is None, f"server exited with {self.proc.returncode}"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def lab() -> Iterator[Callable[..., Lab]]:
    """Spawn lab servers with the given flags; every one is killed and reaped afterwards."""
    started: list[Lab] = []

    def spawn(*flags: str) -> Lab:
        server = Lab(*flags)
        started.append(server)
        return server

    yield spawn
    for server in started:
        server.kill()


def call(msg_id: int | str, method: str, params: Message | None = None) -> Message:
    """A JSON-RPC request message."""
    message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Message | None = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(proc: Lab, message: Message) -> Message:
    """Send a request and return its response; anything else that arrives goes to ``seen``."""
    proc.send(message)
    while True:
        reply = proc.recv()
        if reply.get("id") == message["id"] and "method" not in reply:
            return reply
        proc.seen.append(reply)


def init_params(version: str = LATEST_VERSION, capabilities: Message | None = None) -> Message:
    return {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "pytest", "version": "1"},
    }


def initialize(proc: Lab, version: str = LATEST_VERSION, **capabilities: Message) -> Message:
    """The whole handshake; returns the initialize result."""
    reply = request(proc, call(0, "initialize", init_params(version, capabilities)))
    proc.send(notification("notifications/initialized"))
    return reply["result"]


def tool_call(msg_id: int, name: str, arguments: Message, meta: Message | None = None) -> Message:
    params: Message = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return call(msg_id, "tools/call", params)


def text_result(text: str, is_error: bool = False) -> Message:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def error(reply: Message) -> Message:
    assert "result" not in reply, reply
    return reply["error"]


ALL_CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}


# ----------------------------------------------------------------- handshake


@pytest.mark.parametrize("version", [SUPPORTED_VERSIONS[0], LATEST_VERSION])
def test_initialize_echoes_a_supported_version(lab: Callable[..., Lab], version: str) -> None:
    result = initialize(lab(), version)
    assert result["protocolVersion"] == version
    assert result["capabilities"] == ALL_CAPABILITIES
    assert result["serverInfo"] == {
        "name": "mcp_nb-lab",
        "version": "0.1.0",
        "title": "mcp_nb lab server",
    }
    assert "lab://counter" in result["instructions"]


def test_initialize_counter_offers_latest_supported(lab: Callable[..., Lab]) -> None:
    assert initialize(lab(), "1999-01-01")["protocolVersion"] == LATEST_VERSION
    restricted = lab("--supported-versions", "2024-11-05,2025-03-26")
    assert initialize(restricted, "2025-06-18")["protocolVersion"] == "2025-03-26"


def test_answer_version_overrides_negotiation(lab: Callable[..., Lab]) -> None:
    assert initialize(lab("--answer-version", "2099-01-01"))["protocolVersion"] == "2099-01-01"


def test_reject_version_errors_then_allows_a_retry(lab: Callable[..., Lab]) -> None:
    server = lab("--reject-version", "--supported-versions", "2025-06-18")
    reply = request(server, call(1, "initialize", init_params("2024-11-05")))
    assert error(reply) == {
        "code": -32602,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2025-06-18"], "requested": "2024-11-05"},
    }
    retry = request(server, call(2, "initialize", init_params("2025-06-18")))
    assert retry["result"]["protocolVersion"] == "2025-06-18"


def test_only_ping_is_served_before_initialize(lab: Callable[..., Lab]) -> None:
    server = lab()
    assert error(request(server, call(1, "tools/list"))) == {
        "code": -32600,
        "message": "Server not initialized: send initialize first",
    }
    assert request(server, call(2, "ping")) == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_initialize_twice_is_refused(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    assert error(request(server, call(1, "initialize", init_params())))["code"] == -32600


def test_initialize_without_client_info_is_invalid_params(lab: Callable[..., Lab]) -> None:
    params = {"protocolVersion": LATEST_VERSION, "capabilities": {}}
    assert error(request(lab(), call(1, "initialize", params))) == {
        "code": -32602,
        "message": "Invalid params: initialize params.clientInfo must be an object",
    }


def test_omit_capability_hides_it_but_still_serves(lab: Callable[..., Lab]) -> None:
    server = lab("--omit-capability", "tools", "--omit-capability", "logging")
    assert initialize(server)["capabilities"] == {
        key: value for key, value in ALL_CAPABILITIES.items() if key not in ("tools", "logging")
    }
    assert len(request(server, call(1, "tools/list"))["result"]["tools"]) == 7


# ------------------------------------------------------------- JSON-RPC rules


def test_ping_unknown_method_and_bad_params(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    assert request(server, call("p", "ping"))["result"] == {}
    assert error(request(server, call(1, "foo/bar"))) == {
        "code": -32601,
        "message": "Method not found: foo/bar",
    }
    assert error(request(server, call(2, "resources/read", {"uri": 7}))) == {
        "code": -32602,
        "message": "Invalid params: resources/read params.uri must be a string",
    }


def test_malformed_json_gets_parse_error_with_null_id(lab: Callable[..., Lab]) -> None:
    server = lab()
    server.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    reply = server.recv()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert reply["error"]["message"].startswith("Parse error: ")


@pytest.mark.parametrize(
    ("message", "reply_id"),
    [
        ([1, 2], None),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "result": {}}, None),
        ({"id": 4, "method": "ping"}, 4),  # the id is readable, so the error can carry it
    ],
    ids=["array", "null-id", "bool-id", "response-without-id", "no-jsonrpc"],
)
def test_invalid_requests_get_invalid_request(
    lab: Callable[..., Lab], message: object, reply_id: int | None
) -> None:
    server = lab()
    server.send_raw(json.dumps(message).encode() + b"\n")
    reply = server.recv()
    assert reply["id"] == reply_id
    assert reply["error"]["code"] == -32600


def test_requests_run_concurrently_so_ping_overtakes_slow(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    server.send(tool_call(1, "slow", {"steps": 5, "interval": 0.1}))
    assert request(server, call(2, "ping"))["result"] == {}
    assert all(message.get("id") != 1 for message in server.seen)
    assert request(server, call(3, "ping"))["result"] == {}
    assert server.recv()["result"] == text_result("done after 5 steps")


# ---------------------------------------------------------------------- tools


def test_tools_list(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    tools = request(server, call(1, "tools/list"))["result"]["tools"]
    assert [tool["name"] for tool in tools] == [
        "echo",
        "add",
        "slow",
        "ask_llm",
        "ask_user",
        "list_roots",
        "bump",
    ]
    echo = tools[0]
    assert echo["title"] == "Echo"
    assert echo["inputSchema"] == {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo back."}},
        "required": ["text"],
    }
    assert tools[1]["outputSchema"]["properties"] == {"sum": {"type": "number"}}


def test_echo_and_add(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    echo = request(server, tool_call(1, "echo", {"text": "héllo ✓"}))
    assert echo["result"] == text_result("héllo ✓")
    # A lone surrogate cannot be UTF-8 encoded; the server falls back to a \u escape.
    surrogate = request(server, tool_call(3, "echo", {"text": "\ud800"}))
    assert surrogate["result"] == text_result("\ud800")
    add = request(server, tool_call(2, "add", {"a": 2, "b": 3.5}))
    assert add["result"] == {**text_result("5.5"), "structuredContent": {"sum": 5.5}}


@pytest.mark.parametrize(
    ("name", "arguments", "explanation"),
    [
        ("echo", {}, "Missing required argument(s): text"),
        ("add", {"a": "1", "b": 2}, "Argument 'a' must be of type number, got \"1\""),
        ("add", {"a": True, "b": 2}, "Argument 'a' must be of type number, got true"),
        ("echo", {"text": "x", "loud": True}, "Unexpected argument(s): loud"),
        ("slow", {"steps": -1}, "Argument 'steps' must be >= 0"),
    ],
)
def test_bad_tool_arguments_are_tool_errors(
    lab: Callable[..., Lab], name: str, arguments: Message, explanation: str
) -> None:
    server = lab()
    initialize(server)
    assert request(server, tool_call(1, name, arguments))["result"] == text_result(
        explanation, is_error=True
    )


def test_unknown_tool_is_invalid_params(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    assert error(request(server, tool_call(1, "nope", {}))) == {
        "code": -32602,
        "message": "Unknown tool: nope",
    }


def test_slow_reports_progress(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    call_slow = tool_call(1, "slow", {"steps": 3, "interval": 0.01}, {"progressToken": "tok"})
    assert request(server, call_slow)["result"] == text_result("done after 3 steps")
    progress = [m["params"] for m in server.seen if m["method"] == "notifications/progress"]
    assert progress == [
        {"progressToken": "tok", "progress": step, "total": 3, "message": f"step {step} of 3"}
        for step in (1, 2, 3)
    ]


def test_bump_notifies_subscribers_only(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    updated = notification("notifications/resources/updated", {"uri": "lab://counter"})
    assert request(server, call(1, "resources/subscribe", {"uri": "lab://counter"}))["result"] == {}
    assert request(server, tool_call(2, "bump", {}))["result"] == text_result("counter is now 1")
    assert updated in server.seen
    read = request(server, call(3, "resources/read", {"uri": "lab://counter"}))
    assert read["result"]["contents"][0]["text"] == "1"
    request(server, call(4, "resources/unsubscribe", {"uri": "lab://counter"}))
    server.seen.clear()
    assert request(server, tool_call(5, "bump", {}))["result"] == text_result("counter is now 2")
    assert updated not in server.seen


# ------------------------------------------------------ server → client calls

ROUND_TRIPS = [
    pytest.param(
        "ask_llm",
        {"prompt": "Capital of France?"},
        "sampling",
        "sampling/createMessage",
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Capital of France?"}}
            ],
            "maxTokens": 100,
        },
        {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "m",
            "stopReason": "endTurn",
        },
        "Paris",
        id="ask_llm",
    ),
    pytest.param(
        "ask_user",
        {"message": "Proceed?"},
        "elicitation",
        "elicitation/create",
        {
            "message": "Proceed?",
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
            },
        },
        {"action": "accept", "content": {"answer": "yes"}},
        'action: accept\ncontent: {"answer": "yes"}',
        id="ask_user",
    ),
    pytest.param(
        "list_roots",
        {},
        "roots",
        "roots/list",
        {},
        {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]},
        "file:///a\nfile:///b",
        id="list_roots",
    ),
]


def start_round_trip(server: Lab, tool: str, arguments: Message, capability: str) -> Message:
    """Initialize declaring ``capability``, call ``tool`` and return the server's request."""
    initialize(server, **{capability: {}})
    server.send(tool_call(9, tool, arguments))
    while True:
        message = server.recv()
        if message.get("method") != "notifications/message":
            return message


@pytest.mark.parametrize(
    ("tool", "arguments", "capability", "method", "params", "answer", "text"), ROUND_TRIPS
)
def test_server_to_client_round_trip(
    lab: Callable[..., Lab],
    tool: str,
    arguments: Message,
    capability: str,
    method: str,
    params: Message,
    answer: Message,
    text: str,
) -> None:
    server = lab()
    outgoing = start_round_trip(server, tool, arguments, capability)
    # The lab says how long it waits (--client-request-timeout, 30 s) in _meta.
    assert outgoing == {"jsonrpc": "2.0", "id": 1, "method": method,
                        "params": with_answer_within(params, 30.0)}
    server.send({"jsonrpc": "2.0", "id": 1, "result": answer})
    assert server.recv() == {"jsonrpc": "2.0", "id": 9, "result": text_result(text)}


def test_client_error_becomes_tool_error(lab: Callable[..., Lab]) -> None:
    server = lab()
    outgoing = start_round_trip(server, "ask_llm", {"prompt": "hi"}, "sampling")
    server.send(
        {
            "jsonrpc": "2.0",
            "id": outgoing["id"],
            "error": {"code": -1, "message": "User rejected sampling"},
        }
    )
    assert server.recv()["result"] == text_result(
        "The client answered sampling/createMessage with error -1: User rejected sampling",
        is_error=True,
    )


def test_cancelled_tool_cancels_its_callback_too(lab: Callable[..., Lab]) -> None:
    server = lab()
    outgoing = start_round_trip(server, "ask_llm", {"prompt": "hi"}, "sampling")
    server.send(notification("notifications/cancelled", {"requestId": 9}))
    assert server.recv() == notification(
        "notifications/cancelled",
        {"requestId": outgoing["id"], "reason": "the server no longer needs it"},
    )
    server.send({"jsonrpc": "2.0", "id": outgoing["id"], "result": {"content": []}})
    server.assert_silent(0.3)  # neither the late answer nor the cancelled call get a reply


def test_callbacks_need_the_client_capability(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    reply = request(server, tool_call(1, "list_roots", {}))
    assert reply["result"] == text_result(
        "The client did not declare the 'roots' capability, so the server may not send roots/list.",
        is_error=True,
    )


# --------------------------------------------------------------- cancellation


def start_slow_then_cancel(server: Lab) -> None:
    """Start a 0.5 s slow call (id 7), cancel it and let a ping flush the log notification."""
    initialize(server)
    server.send(tool_call(7, "slow", {"steps": 10, "interval": 0.05}))
    server.send(notification("notifications/cancelled", {"requestId": 7, "reason": "bored"}))
    assert request(server, call(8, "ping"))["result"] == {}


def test_cancelled_request_gets_no_response(lab: Callable[..., Lab]) -> None:
    server = lab()
    start_slow_then_cancel(server)
    server.assert_silent(0.8)
    server.wait_stderr("slow cancelled")


def test_ignore_cancel_sends_a_late_response(lab: Callable[..., Lab]) -> None:
    server = lab("--ignore-cancel")
    start_slow_then_cancel(server)
    late = server.recv()
    assert late == {"jsonrpc": "2.0", "id": 7, "result": text_result("done after 10 steps")}


# ------------------------------------------------------------------ resources


def test_resources_list_and_read(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    resources = request(server, call(1, "resources/list"))["result"]["resources"]
    assert [(r["uri"], r["name"], r["mimeType"]) for r in resources] == [
        ("lab://static/hello.txt", "hello.txt", "text/plain"),
        ("lab://counter", "counter", "text/plain"),
    ]
    read = request(server, call(2, "resources/read", {"uri": "lab://static/hello.txt"}))
    assert read["result"] == {
        "contents": [
            {
                "uri": "lab://static/hello.txt",
                "mimeType": "text/plain",
                "text": "Hello from the mcp_nb lab server.\n",
            }
        ]
    }


def test_unknown_resource(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    for msg_id, method in enumerate(("resources/read", "resources/subscribe")):
        assert error(request(server, call(msg_id, method, {"uri": "lab://nope"}))) == {
            "code": -32002,
            "message": "Resource not found",
            "data": {"uri": "lab://nope"},
        }


def test_resource_template(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    templates = request(server, call(1, "resources/templates/list"))["result"]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["lab://echo/{text}"]
    read = request(server, call(2, "resources/read", {"uri": "lab://echo/hi%20there"}))
    assert read["result"]["contents"][0]["text"] == "hi there"


def test_list_cursor_is_refused(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    assert error(request(server, call(1, "prompts/list", {"cursor": "x"})))["code"] == -32602


# ------------------------------------------------------ prompts and completion


def test_prompts(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    (prompt,) = request(server, call(1, "prompts/list"))["result"]["prompts"]
    assert prompt["name"] == "greet"
    assert [(a["name"], a["required"]) for a in prompt["arguments"]] == [
        ("name", True),
        ("style", False),
    ]
    get = call(2, "prompts/get", {"name": "greet", "arguments": {"name": "Ada", "style": "formal"}})
    assert request(server, get)["result"] == {
        "description": "A formal greeting for Ada",
        "messages": [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "Please write a formal greeting for Ada.",
                },
            }
        ],
    }
    missing = call(3, "prompts/get", {"name": "greet", "arguments": {"style": "casual"}})
    assert error(request(server, missing)) == {
        "code": -32602,
        "message": "Missing required argument: name",
    }


@pytest.mark.parametrize(("prefix", "values"), [("f", ["formal"]), ("", ["formal", "casual"])])
def test_completion_filters_styles_by_prefix(
    lab: Callable[..., Lab], prefix: str, values: list[str]
) -> None:
    server = lab()
    initialize(server)
    params = {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "style", "value": prefix},
    }
    assert request(server, call(1, "completion/complete", params))["result"] == {
        "completion": {"values": values, "total": len(values), "hasMore": False},
    }


def test_completion_of_unknown_prompt_is_invalid_params(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    params = {
        "ref": {"type": "ref/prompt", "name": "nope"},
        "argument": {"name": "style", "value": ""},
    }
    assert error(request(server, call(1, "completion/complete", params)))["code"] == -32602


# -------------------------------------------------------------------- logging


def log_levels_of_echo(server: Lab, msg_id: int) -> list[tuple[str, object]]:
    """Call echo and return the (level, data) of the log notifications it caused."""
    server.seen.clear()
    request(server, tool_call(msg_id, "echo", {"text": "x"}))
    return [
        (m["params"]["level"], m["params"]["data"])
        for m in server.seen
        if m["method"] == "notifications/message"
    ]


def test_logging_level_filters_messages(lab: Callable[..., Lab]) -> None:
    server = lab()
    initialize(server)
    assert log_levels_of_echo(server, 1) == [("info", "echo called")]
    assert request(server, call(2, "logging/setLevel", {"level": "debug"}))["result"] == {}
    assert log_levels_of_echo(server, 3) == [
        ("info", "echo called"),
        ("debug", {"tool": "echo", "arguments": {"text": "x"}}),
    ]
    request(server, call(4, "logging/setLevel", {"level": "warning"}))
    assert log_levels_of_echo(server, 5) == []
    assert error(request(server, call(6, "logging/setLevel", {"level": "loud"})))["code"] == -32602


# ---------------------------------------------------------------- process life


def test_stdin_eof_exits_zero_after_answering(lab: Callable[..., Lab]) -> None:
    server = lab()
    server.send(call(1, "ping"))
    server.close_stdin()
    assert server.recv() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert server.exit_code() == 0


def test_sigterm_exits_zero(lab: Callable[..., Lab]) -> None:
    server = lab()
    server.wait_stderr("mcp_nb lab server ready")
    server.proc.send_signal(signal.SIGTERM)
    assert server.exit_code() == 0


def test_ignore_stdin_close_needs_sigterm(lab: Callable[..., Lab]) -> None:
    server = lab("--ignore-stdin-close")
    server.close_stdin()
    server.wait_stderr("staying alive anyway")
    server.assert_alive_after(0.3)
    server.proc.send_signal(signal.SIGTERM)
    assert server.exit_code() == 0


def test_ignore_sigterm_and_stdin_close_need_sigkill(lab: Callable[..., Lab]) -> None:
    server = lab("--ignore-sigterm", "--ignore-stdin-close")
    server.wait_stderr("mcp_nb lab server ready")
    server.close_stdin()
    server.proc.send_signal(signal.SIGTERM)
    server.assert_alive_after(0.5)
    server.proc.kill()
    assert server.exit_code() == -signal.SIGKILL


def test_crash_after_exits_with_code_3(lab: Callable[..., Lab]) -> None:
    server = lab("--crash-after", "2")
    initialize(server)  # line 1 is answered, line 2 (initialized) is the last straw
    assert server.exit_code() == 3
    assert "crashing on purpose after 2 messages" in server.stderr
    server.assert_stdout_closed()


def test_exit_after_leaves_on_its_own(lab: Callable[..., Lab]) -> None:
    server = lab("--exit-after", "0.3")
    started = time.monotonic()
    server.assert_stdout_closed()
    assert server.exit_code() == 0
    assert time.monotonic() - started >= 0.3
    assert "exiting on my own after 0.3 s" in server.stderr


def test_exit_after_counts_again_from_the_first_message_and_the_handshake(
        lab: Callable[..., Lab]) -> None:
    # On a busy machine a client's handshake can take longer than SECONDS: the session must
    # still get to Operating before the server leaves (chapter 07 relies on it).
    server = lab("--exit-after", "3")
    server.wait_stderr("ready")
    time.sleep(1.5)
    request(server, call(0, "initialize", init_params(LATEST_VERSION, {})))
    time.sleep(2)  # 3.5 s from the start: past the first countdown
    server.send(notification("notifications/initialized"))
    server.wait_stderr("session operating")
    server.assert_alive_after(2)  # 5.5 s from the start, 4 s after the first message
    server.assert_stdout_closed()
    assert server.exit_code() == 0
    assert "exiting on my own after 3 s" in server.stderr


# ---------------------------------------------------------------- wire faults


def test_delay_holds_back_responses(lab: Callable[..., Lab]) -> None:
    server = lab("--delay", "0.3")
    initialize(server)
    started = time.monotonic()
    assert request(server, call(1, "ping"))["result"] == {}
    assert time.monotonic() - started >= 0.3


def test_garbage_stdout_before_every_response(lab: Callable[..., Lab]) -> None:
    server = lab("--garbage-stdout")
    assert server.read_line() == GARBAGE
    server.send(call(1, "ping"))
    assert server.read_line() == GARBAGE
    assert json.loads(server.read_line() or b"") == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_request_before_initialized(lab: Callable[..., Lab]) -> None:
    server = lab("--request-before-initialized")
    request(server, call(0, "initialize", init_params()))
    assert server.recv() == {"jsonrpc": "2.0", "id": 1, "method": "roots/list",
                             "params": with_answer_within({}, 30.0)}
    server.send({"jsonrpc": "2.0", "id": 1, "result": {"roots": []}})
    server.wait_stderr("the client answered the premature roots/list")


def test_reuse_response_id_answers_twice(lab: Callable[..., Lab]) -> None:
    server = lab("--reuse-response-id")
    server.send(call(5, "ping"))
    assert server.recv() == server.recv() == {"jsonrpc": "2.0", "id": 5, "result": {}}


def test_never_answer_one_method(lab: Callable[..., Lab]) -> None:
    server = lab("--never-answer", "tools/list")
    initialize(server)
    server.send(call(1, "tools/list"))
    server.send(call(2, "ping"))
    assert server.recv() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    server.assert_silent(0.3)


def test_never_answer_star_spares_initialize(lab: Callable[..., Lab]) -> None:
    server = lab("--never-answer", "*")
    assert initialize(server)["protocolVersion"] == LATEST_VERSION
    server.send(call(1, "ping"))
    server.assert_silent(0.3)


def test_never_answer_initialize_hangs_the_handshake(lab: Callable[..., Lab]) -> None:
    server = lab("--never-answer", "initialize")
    server.send(call(0, "initialize", init_params()))
    server.assert_silent(0.3)
    assert request(server, call(1, "ping"))["result"] == {}


def test_hostile_strings(lab: Callable[..., Lab]) -> None:
    server = lab("--hostile-strings")
    result = initialize(server)
    assert result["serverInfo"]["name"] == f"mcp_nb-lab {HOSTILE}"
    assert result["instructions"].endswith(HOSTILE)
    assert all(s in HOSTILE for s in ("<script>", "\n", "\u202e", "\x1b[", "{{", '"', "&"))
    tools = request(server, call(1, "tools/list"))["result"]["tools"]
    assert tools[-1]["name"] == HOSTILE_TOOL_NAME
    assert tools[0]["description"] == f"Returns the given text unchanged. {HOSTILE}"
    reply = request(server, tool_call(2, HOSTILE_TOOL_NAME, {"text": "still callable"}))
    assert reply["result"]["content"] == [
        {"type": "text", "text": "still callable"},
        {"type": "text", "text": HOSTILE},
    ]


def test_stderr_chatter(lab: Callable[..., Lab]) -> None:
    server = lab("--stderr-chatter", "3000")  # ~130 KB: more than a pipe buffer holds
    server.wait_stderr("mcp_nb lab server ready")
    assert server.stderr.count("(--stderr-chatter)") == 3000
    assert request(server, call(1, "ping"))["result"] == {}


def test_help_documents_every_knob() -> None:
    help_text = subprocess.run(
        [sys.executable, "-m", "mcp_nb.lab", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=TIMEOUT,
        check=True,
    ).stdout
    for flag in (
        "--answer-version",
        "--supported-versions",
        "--reject-version",
        "--omit-capability",
        "--delay",
        "--ignore-cancel",
        "--ignore-stdin-close",
        "--ignore-sigterm",
        "--crash-after",
        "--exit-after",
        "--garbage-stdout",
        "--request-before-initialized",
        "--reuse-response-id",
        "--never-answer",
        "--hostile-strings",
        "--stderr-chatter",
        # The authorization server's flags are parsed apart but listed too.
        "--auth",
        "--auth-approval",
        "--auth-fault",
    ):
        assert flag in help_text
