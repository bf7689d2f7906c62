"""The lab server: an MCP protocol engine plus its stdio plumbing.

Two layers, kept apart so an HTTP transport can reuse the first:

* :class:`LabSession` is one MCP session.  Feed it decoded messages with
  :meth:`LabSession.receive` (or raw JSON with :meth:`LabSession.receive_json`)
  from inside a running asyncio loop; it answers through the ``send`` callable
  it was built with.  Each request runs in its own task, so a slow tool never
  holds up a ping or a ``notifications/cancelled``.
* :func:`serve_stdio` wires a session to this process's stdin/stdout: a daemon
  thread reads lines (blocking reads would stall the loop), the loop thread alone
  writes stdout, and stderr gets human-readable diagnostics only.

A session serves both eras of MCP (``--era``).  A handshake-era request is
served in the context ``initialize`` set up (version, client capabilities, log
level); a stateless-era request (2026-07-28) brings all of that in its own
``params._meta`` and is served from that alone: its result carries
``resultType`` and the server's identity, a tool that needs the client's help
answers ``input_required`` instead of calling the client, and log messages flow
only at the level the request asked for.  Application state (the counter, the
bonus toggle, open subscriptions) is the server's own and is shared by both.

Fault knobs (:class:`~mcp_nb.lab.knobs.Knobs`) that concern the protocol live in
the session; those that concern the process (signals, EOF, crashing, stdout
garbage) live in the stdio layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.metadata
import json
import operator
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from mcp_nb.lab.content import (
    BONUS,
    BONUS_TEXT,
    BONUS_URI,
    COUNTER_URI,
    ECHO_PREFIX,
    ECHO_TEMPLATE,
    GREET,
    GREET_STYLES,
    HELLO_TEXT,
    HELLO_URI,
    ToolSpec,
    build_catalogue,
)
from mcp_nb.lab.eras import (
    CACHEABLE_METHODS,
    MODERN_ONLY_METHODS,
    Listener,
    Rounds,
    decode_request_state,
    encode_request_state,
    honoured_filter,
    input_key,
    removed_method_note,
    request_digest,
)
from mcp_nb.lab.knobs import Knobs
from mcp_nb.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcp_nb.protocol.models import LOG_LEVELS
from mcp_nb.protocol.stateless import (
    INPUT_REQUEST_CAPABILITY,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    SUBSCRIPTION_FILTERS,
    is_stateless_request,
    missing_request_meta,
)

Message = dict[str, Any]
#: Delivers one outgoing message to the client; called from the loop thread only.
Send = Callable[[Message], None]
RequestId = str | int

#: Seconds that open subscriptions get to send their final result at shutdown.
_GOODBYE = 1.0

#: Methods a client may send before initialize has succeeded.
_PRE_INIT_METHODS = frozenset({"initialize", "ping"})

_KIND_NAMES = {str: "a string", dict: "an object", list: "an array"}


def diag(text: str) -> None:
    """A diagnostic line on stderr: stdout belongs to the protocol alone.

    A client that closed our stderr must not be able to crash us, so write
    errors are swallowed.
    """
    with contextlib.suppress(OSError, ValueError):
        print(f"lab: {text}", file=sys.stderr, flush=True)


def _package_version() -> str:
    try:
        return importlib.metadata.version("mcp_nb")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0"


def _is_request_id(value: object) -> bool:
    """MCP ids are strings or integers; ``null`` and booleans are not ids."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class RpcError(Exception):
    """A JSON-RPC error, raised by handlers or received from the client."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        """The ``error`` member of a response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: object) -> RpcError:
        """Rebuild an error the client sent, tolerating a malformed one."""
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            code = error.get("code")
            return cls(
                code if isinstance(code, int) else INTERNAL_ERROR,
                error["message"],
                error.get("data"),
            )
        return cls(INTERNAL_ERROR, f"malformed error object: {error!r}")


class ToolFailure(Exception):
    """A tool ran and failed: reported as a result with ``isError: true``.

    Tool failures are meant for the model to read and react to, so they travel
    as results; protocol errors are for the client program.
    """


def _field(mapping: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """``mapping[key]`` if it has type ``kind``, else an Invalid params error naming it."""
    value = mapping.get(key)
    if not isinstance(value, kind):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {where}.{key} must be {_KIND_NAMES[kind]}")
    return value


@dataclass(frozen=True)
class Request:
    """One request from the client, validated enough to dispatch."""

    id: RequestId
    method: str
    params: dict[str, Any]
    #: Served in the stateless era: everything it needs is in ``params._meta``.
    stateless: bool = False

    def param(self, key: str, kind: type) -> Any:
        """A required parameter of the given JSON type."""
        return _field(self.params, key, kind, f"{self.method} params")

    @property
    def meta(self) -> dict[str, Any]:
        """``params._meta`` (empty if absent or not an object)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> str | int | None:
        """``params._meta.progressToken``: present means the client wants progress."""
        token = self.meta.get("progressToken")
        return token if _is_request_id(token) else None


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
}
_BOUNDS = (("minimum", operator.lt, ">="), ("maximum", operator.gt, "<="))


def _check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate tool arguments against the (flat) input schemas of this catalogue.

    Returns the arguments with defaults filled in.  Failures become tool errors
    (``isError``), as the 2025-11-25 revision recommends, so a model can retry.
    """
    properties: dict[str, Any] = schema["properties"]
    unexpected = sorted(set(arguments) - set(properties))
    if unexpected:
        raise ToolFailure(f"Unexpected argument(s): {', '.join(unexpected)}")
    missing = [name for name in schema["required"] if name not in arguments]
    if missing:
        raise ToolFailure(f"Missing required argument(s): {', '.join(missing)}")
    checked: dict[str, Any] = {}
    for name, prop in properties.items():
        if name not in arguments and "default" not in prop:
            continue
        value = arguments.get(name, prop.get("default"))
        kind = prop["type"]
        # bool subclasses int in Python, but true and false are not JSON numbers.
        if isinstance(value, bool) or not isinstance(value, _JSON_TYPES[kind]):
            raise ToolFailure(f"Argument {name!r} must be of type {kind}, got {json.dumps(value)}")
        for keyword, breaks, relation in _BOUNDS:
            if keyword in prop and breaks(value, prop[keyword]):
                raise ToolFailure(f"Argument {name!r} must be {relation} {prop[keyword]}")
        checked[name] = value
    return checked


def _sampled_text(content: object) -> str:
    """The text of a ``sampling/createMessage`` result (one block or, since 2025-11-25, a list)."""
    blocks = content if isinstance(content, list) else [content]
    texts = [
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    if not texts:
        raise ToolFailure("The client's sampling result contained no text content.")
    return "".join(texts)


def _elicited_text(answer: dict[str, Any]) -> str:
    """What ``ask_user`` reports of an ``elicitation/create`` result."""
    text = f"action: {answer.get('action')}"
    if "content" in answer:
        text += f"\ncontent: {json.dumps(answer['content'], ensure_ascii=False)}"
    return text


def _root_list_text(answer: dict[str, Any]) -> str:
    """What ``list_roots`` reports of a ``roots/list`` result: one URI a line."""
    roots = answer.get("roots")
    if not isinstance(roots, list) or not all(
        isinstance(root, dict) and isinstance(root.get("uri"), str) for root in roots
    ):
        raise ToolFailure("The client's roots/list result had no valid roots array.")
    return "\n".join(root["uri"] for root in roots) or "(no roots)"


MethodHandler = Callable[[Request], Coroutine[Any, Any, Message]]
ToolHandler = Callable[[dict[str, Any], Request], Coroutine[Any, Any, Message]]


class LabSession:
    """One MCP session of the lab server, independent of any transport.

    Build it with the knobs and a ``send`` callable, then call :meth:`receive`
    for every incoming message from within the event loop, and :meth:`close`
    when the transport goes away.

    ``era`` (default: ``knobs.era``) says which requests this session serves
    statelessly: a transport that routes the eras itself (HTTP) passes
    ``"handshake"`` or ``"stateless"``.  The versions the server advertises
    still follow ``knobs.era``.
    """

    def __init__(self, knobs: Knobs, send: Send, era: str | None = None) -> None:
        self.knobs = knobs
        self.era = era or knobs.era
        self.catalogue = build_catalogue(hostile=knobs.hostile_strings,
                                         list_changes=knobs.list_changes)
        self._send = send
        #: "new" until initialize succeeds, then "initialized", then "operating"
        #: once notifications/initialized arrives.
        self.state = "new"
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self._log_threshold = LOG_LEVELS.index("info")
        self._counter = 0
        self._bonus = False
        #: Handshake era: URIs the session subscribed to with resources/subscribe.
        self._subscriptions: set[str] = set()
        #: Stateless era: open subscriptions/listen requests, by the task serving each.
        self._listeners: dict[asyncio.Task[Any], Listener] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inflight: dict[RequestId, tuple[str, asyncio.Task[Any]]] = {}
        self._outgoing: dict[int, asyncio.Future[Any]] = {}
        self._last_outgoing_id = 0
        shared: dict[str, MethodHandler] = {
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
        }
        self._methods: dict[str, MethodHandler] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            **shared,
        }
        self._stateless_methods: dict[str, MethodHandler] = {
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
            **shared,
        }
        self._tools: dict[str, ToolHandler] = {
            "echo": self._tool_echo,
            "add": self._tool_add,
            "slow": self._tool_slow,
            "ask_llm": self._tool_ask_llm,
            "ask_user": self._tool_ask_user,
            "list_roots": self._tool_list_roots,
            "bump": self._tool_bump,
            "toggle_bonus": self._tool_toggle_bonus,
            BONUS: self._tool_bonus,
        }

    # ----------------------------------------------------------- incoming

    def receive_json(self, data: bytes | str) -> None:
        """Decode one JSON text and :meth:`receive` it; undecodable input gets -32700."""
        try:
            message = json.loads(data)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
            self._reply_later(None, RpcError(PARSE_ERROR, f"Parse error: {exc}"))
            return
        self.receive(message)

    def receive(self, message: object) -> asyncio.Task[Any] | None:
        """Route one decoded message: request, notification or response.

        Returns the task serving a request (so a transport can cancel it when
        its client goes away), else None.
        """
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._invalid(message, "expected a JSON-RPC 2.0 object")
            return None
        if "method" not in message:
            if _is_request_id(message.get("id")) and ("result" in message or "error" in message):
                self._receive_response(message)
            else:
                self._invalid(message, "neither a request, a notification nor a response")
            return None
        method, params = message["method"], message.get("params", {})
        if not isinstance(method, str):
            self._invalid(message, "method must be a string")
        elif "id" not in message:
            if isinstance(params, dict):
                # A task, like requests, so a notification never overtakes an earlier
                # request (notifications/initialized must follow initialize's effect).
                self._spawn(self._receive_notification(method, params))
            else:
                diag(f"ignoring notification {method} whose params are not an object")
        elif not _is_request_id(message["id"]):
            self._invalid(message, "id must be a string or an integer")
        elif not isinstance(params, dict):
            self._reply_later(
                message["id"], RpcError(INVALID_PARAMS, "Invalid params: params must be an object")
            )
        elif self.knobs.never_answers(method):
            diag(f"never answering {method} (id {message['id']!r}) (--never-answer)")
        else:
            request = Request(message["id"], method, params, self._is_stateless(method, params))
            task = self._spawn(self._serve(request))
            self._inflight[request.id] = (method, task)
            return task
        return None

    def _is_stateless(self, method: str, params: dict[str, Any]) -> bool:
        """Which era serves this request: the session's, or (dual-era) the request's own."""
        if self.era != "both":
            return self.era == "stateless"
        return is_stateless_request(params) or method in MODERN_ONLY_METHODS

    def _invalid(self, message: object, why: str) -> None:
        """Answer -32600, echoing the id only if one can be read off the message."""
        msg_id = message.get("id") if isinstance(message, dict) else None
        self._reply_later(
            msg_id if _is_request_id(msg_id) else None,
            RpcError(INVALID_REQUEST, f"Invalid Request: {why}"),
        )

    def _receive_response(self, message: Message) -> None:
        future = self._outgoing.get(message["id"])
        if future is None or future.done():
            diag(f"ignoring a response to unknown request id {message['id']!r}")
        elif "error" in message:
            future.set_exception(RpcError.from_wire(message["error"]))
        else:
            future.set_result(message["result"])

    async def _receive_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            if self.state == "new":
                diag("notifications/initialized arrived before initialize; ignoring it")
            else:
                self.state = "operating"
                diag("client sent notifications/initialized: session operating")
        elif method == "notifications/cancelled":
            self._cancel(params.get("requestId"), params.get("reason"))
        else:
            diag(f"notification {method} received")

    def _cancel(self, request_id: object, reason: object) -> None:
        """Cancel an in-flight request; its task then ends without responding."""
        if self.knobs.ignore_cancel:
            diag(f"ignoring cancellation of request {request_id!r} (--ignore-cancel)")
            return
        entry = self._inflight.get(request_id) if _is_request_id(request_id) else None
        if entry is None:
            diag(f"cancellation of unknown or finished request {request_id!r}; nothing to do")
        elif entry[0] == "initialize":
            diag("clients must not cancel initialize; ignoring the cancellation")
        else:
            diag(f"cancelling request {request_id!r} ({reason})")
            entry[1].cancel()

    def abandon(self, task: asyncio.Task[Any], reason: str) -> None:
        """Cancel the task :meth:`receive` returned: its client went away (HTTP's cancel)."""
        if task.done():
            return
        if self.knobs.ignore_cancel:
            diag(f"not cancelling a request whose client left (--ignore-cancel): {reason}")
            return
        diag(f"cancelling a request: {reason}")
        task.cancel()

    # ----------------------------------------------------------- outgoing

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Start a task and keep a reference so it is neither collected nor forgotten at close."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _send_response(self, response: Message) -> None:
        """Send a response, applying the --delay and --reuse-response-id knobs."""
        if self.knobs.delay:
            await asyncio.sleep(self.knobs.delay)
        self._send(response)
        if self.knobs.reuse_response_id:
            self._send(response)

    def _reply_later(self, request_id: RequestId | None, error: RpcError) -> None:
        """Answer with an error from a task, so even these responses honour --delay."""
        self._spawn(
            self._send_response({"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()})
        )

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification to the client."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, request: Request, level: str, data: Any) -> None:
        """Send ``notifications/message`` if ``level`` reaches the client's chosen level.

        The handshake era's level is the session's (logging/setLevel); a
        stateless request logs only if its ``_meta`` names a level.
        """
        if request.stateless:
            chosen = request.meta.get(META_LOG_LEVEL)
            threshold = LOG_LEVELS.index(chosen) if chosen in LOG_LEVELS else None
        else:
            threshold = self._log_threshold
        if threshold is not None and LOG_LEVELS.index(level) >= threshold:
            self.notify("notifications/message", {"level": level, "logger": "lab", "data": data})

    async def request_client(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request to the client and wait for its result.

        A client error is raised as :class:`RpcError`.  If the waiting task is
        cancelled, the client is told with ``notifications/cancelled``.
        """
        self._last_outgoing_id += 1
        request_id = self._last_outgoing_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._outgoing[request_id] = future
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await future
        except asyncio.CancelledError:
            self.notify(
                "notifications/cancelled",
                {"requestId": request_id, "reason": "the server no longer needs it"},
            )
            raise
        finally:
            del self._outgoing[request_id]

    # ----------------------------------------------------------- requests

    async def _serve(self, request: Request) -> None:
        """Run one request to completion and respond, unless cancelled."""
        try:
            response: Message = {"jsonrpc": "2.0", "id": request.id}
            try:
                response["result"] = await self._dispatch(request)
            except RpcError as exc:
                response["error"] = exc.to_wire()
            except Exception as exc:  # a bug in a handler must not kill the session
                diag(f"{request.method} failed:\n{traceback.format_exc()}")
                response["error"] = RpcError(INTERNAL_ERROR, f"Internal error: {exc}").to_wire()
            await self._send_response(response)
        finally:
            if self._inflight.get(request.id, (None, None))[1] is asyncio.current_task():
                del self._inflight[request.id]
        if (
            request.method == "initialize"
            and "result" in response
            and self.knobs.request_before_initialized
        ):
            self._spawn(self._premature_roots_request())

    async def _dispatch(self, request: Request) -> Message:
        if request.stateless:
            return self._stateless_result(request, await self._dispatch_stateless(request))
        handler = self._methods.get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if self.state == "new" and request.method not in _PRE_INIT_METHODS:
            raise RpcError(INVALID_REQUEST, "Server not initialized: send initialize first")
        return await handler(request)

    async def _dispatch_stateless(self, request: Request) -> Message:
        """Check a stateless request's ``_meta`` (the first failure is the answer), then
        serve the request from that alone."""
        if request.method == "initialize" and not is_stateless_request(request.params):
            raise self._initialize_refused(request.params.get("protocolVersion"))
        missing = missing_request_meta(request.params)
        if missing:
            raise RpcError(INVALID_PARAMS, f"Invalid params: params._meta lacks "
                           f"{', '.join(missing)}, which every 2026-07-28 request carries")
        version = request.meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {META_PROTOCOL_VERSION} must be "
                           "a string")
        if version not in self.knobs.stateless_versions:
            served = self.served_versions()
            raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                           {"supported": served, "requested": version})
        if not isinstance(request.meta[META_CLIENT_CAPABILITIES], dict):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {META_CLIENT_CAPABILITIES} must "
                           "be an object")
        level = request.meta.get(META_LOG_LEVEL)
        if level is not None and level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, f"Invalid params: unknown {META_LOG_LEVEL} "
                           f"{level!r}; expected one of {', '.join(LOG_LEVELS)}")
        handler = self._stateless_methods.get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}"
                           f"{removed_method_note(request.method)}")
        return await handler(request)

    def _initialize_refused(self, offered: object) -> RpcError:
        """What a stateless-only server says to ``initialize``: the versions it does speak.

        A handshake-era client cannot fall forward, so this message may be all
        its user ever sees; it names the versions (a SHOULD of 2026-07-28).
        """
        served = self.served_versions()
        data: dict[str, Any] = {"supported": served}
        if isinstance(offered, str):
            data["requested"] = offered
        return RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: this server speaks only {', '.join(served)}, the "
            "stateless era, which has no initialize; send requests with the version in "
            f"params._meta[{META_PROTOCOL_VERSION!r}]",
            data,
        )

    def _stateless_result(self, request: Request, result: Message) -> Message:
        """Dress a result for the stateless era: resultType, cache hints, serverInfo."""
        dressed = dict(result)
        dressed.setdefault("resultType", RESULT_COMPLETE)
        if self.knobs.omit_result_type and dressed["resultType"] == RESULT_COMPLETE:
            del dressed["resultType"]  # --omit-result-type
        if request.method in CACHEABLE_METHODS:
            # Nothing here is user-specific, but the counter changes at any time.
            dressed.update(ttlMs=0, cacheScope="public")
        dressed["_meta"] = {**dressed.get("_meta", {}), META_SERVER_INFO: self.server_info()}
        return dressed

    def served_versions(self) -> list[str]:
        """Every version the server speaks in the eras it serves, newest first."""
        versions: set[str] = set()
        if self.knobs.serves_stateless:
            versions.update(self.knobs.stateless_versions)
        if self.knobs.serves_handshake:
            versions.update(self.knobs.supported_versions)
        return sorted(versions, reverse=True)  # ISO dates sort chronologically

    async def _premature_roots_request(self) -> None:
        diag("sending roots/list before notifications/initialized (--request-before-initialized)")
        try:
            result = await self.request_client("roots/list", {})
        except RpcError as exc:
            diag(f"the client refused the premature roots/list: {exc.code} {exc.message}")
        else:
            diag(f"the client answered the premature roots/list: {result!r}")

    def _negotiate(self, offered: str) -> str:
        """Pick the version to answer: the offered one if spoken, else a counter-offer."""
        knobs = self.knobs
        if knobs.answer_version is not None:
            return knobs.answer_version
        if offered in knobs.supported_versions:
            return offered
        if knobs.reject_version:
            raise RpcError(
                INVALID_PARAMS,
                "Unsupported protocol version",
                {"supported": list(knobs.supported_versions), "requested": offered},
            )
        return max(knobs.supported_versions)  # ISO dates sort chronologically

    def capabilities(self) -> dict[str, Any]:
        """The declared server capabilities, minus any --omit-capability."""
        full = {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "logging": {},
            "completions": {},
        }
        return {
            name: value for name, value in full.items() if name not in self.knobs.omit_capabilities
        }

    async def _initialize(self, request: Request) -> Message:
        if self.state != "new":
            raise RpcError(INVALID_REQUEST, "Already initialized: send initialize only once")
        offered = request.param("protocolVersion", str)
        capabilities = request.param("capabilities", dict)
        client_info = request.param("clientInfo", dict)
        version = self._negotiate(offered)
        self.protocol_version = version
        self.client_capabilities = capabilities
        self.client_info = client_info
        self.state = "initialized"
        diag(f"initialize from {client_info.get('name')!r}: offered {offered}, answering {version}")
        return {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": self.server_info(),
            "instructions": self.catalogue.instructions,
        }

    def server_info(self) -> dict[str, Any]:
        """The Implementation object: serverInfo (handshake), _meta serverInfo (stateless)."""
        return {
            "name": self.catalogue.server_name,
            "version": _package_version(),
            "title": self.catalogue.server_title,
        }

    async def _discover(self, request: Request) -> Message:
        return {
            "supportedVersions": self.served_versions(),
            "capabilities": self.capabilities(),
            "instructions": self.catalogue.instructions,
            # Nothing here changes while the server runs, but a teaching server may be
            # restarted with other flags at any moment: never serve it from a cache.
            "ttlMs": 0,
            "cacheScope": "public",
        }

    async def _listen(self, request: Request) -> Message:
        """``subscriptions/listen``: acknowledge, then stay open until cancelled or shut down.

        Matching changes are sent from whatever task makes them (see
        :meth:`_publish`), inside this request's context, so they reach this
        request's stream on HTTP and are written before the change's own
        response on stdio.
        """
        wanted = request.param("notifications", dict)
        try:
            honoured = honoured_filter(wanted, self.capabilities(), self._resource_exists)
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        task = asyncio.current_task()
        assert task is not None
        listener = Listener(request.id, honoured, contextvars.copy_context())
        self._listeners[task] = listener
        try:
            self.notify("notifications/subscriptions/acknowledged",
                        {"notifications": honoured,
                         "_meta": {META_SUBSCRIPTION_ID: request.id}})
            await listener.ended.wait()
        finally:
            del self._listeners[task]
        diag(f"subscription {request.id!r} ended by the server")
        return {"_meta": {META_SUBSCRIPTION_ID: request.id}}

    def _publish(self, flag: str, params: dict[str, Any], uri: str | None = None) -> None:
        """Send a change notification to every open listen request that opted in to it."""
        for listener in self._listeners.values():
            if listener.wants(flag, uri):
                stamped = {**params, "_meta": {META_SUBSCRIPTION_ID: listener.request_id}}
                message = {"jsonrpc": "2.0", "method": SUBSCRIPTION_FILTERS[flag],
                           "params": stamped}
                listener.context.run(self._send, message)

    async def _ping(self, request: Request) -> Message:
        return {}

    async def _set_level(self, request: Request) -> Message:
        level = request.param("level", str)
        if level not in LOG_LEVELS:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: unknown log level {level!r}; expected one of "
                f"{', '.join(LOG_LEVELS)}",
            )
        self._log_threshold = LOG_LEVELS.index(level)
        return {}

    @staticmethod
    def _refuse_cursor(request: Request) -> None:
        """Every list fits one page, so any cursor is one this server never issued."""
        if "cursor" in request.params:
            raise RpcError(INVALID_PARAMS, "Invalid params: unknown cursor (lists are one page)")

    # -------------------------------------------------------------- tools

    def _tool_specs(self) -> list[ToolSpec]:
        """The tools on offer right now (the bonus tool comes and goes)."""
        bonus = [self.catalogue.bonus.tool] if self._bonus else []
        return [*self.catalogue.tools.values(), *bonus]

    async def _tools_list(self, request: Request) -> Message:
        self._refuse_cursor(request)
        return {"tools": [tool.listing() for tool in self._tool_specs()]}

    async def _tools_call(self, request: Request) -> Message:
        name = request.param("name", str)
        arguments = request.params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: tools/call arguments must be an object")
        tool = self.catalogue.tools.get(name)
        if tool is None and self._bonus and name == BONUS:
            tool = self.catalogue.bonus.tool
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        if request.stateless and tool.asks is not None:
            # Checked before anything is sent, so over HTTP the refusal is still a plain 400.
            self._require_capability(request, tool.asks)
        self.log(request, "info", f"{tool.handler} called")
        self.log(request, "debug", {"tool": tool.handler, "arguments": arguments})
        try:
            return await self._tools[tool.handler](
                _check_arguments(tool.input_schema, arguments), request
            )
        except ToolFailure as exc:
            return self._tool_result(str(exc), is_error=True)

    def _tool_result(
        self, text: str, structured: dict[str, Any] | None = None, is_error: bool = False
    ) -> Message:
        content = [{"type": "text", "text": text}]
        if self.catalogue.tool_output_extra:
            content.append({"type": "text", "text": self.catalogue.tool_output_extra})
        result: Message = {"content": content, "isError": is_error}
        if structured is not None:
            result["structuredContent"] = structured
        return result

    async def _tool_echo(self, args: dict[str, Any], request: Request) -> Message:
        return self._tool_result(args["text"])

    async def _tool_add(self, args: dict[str, Any], request: Request) -> Message:
        total = args["a"] + args["b"]
        return self._tool_result(str(total), structured={"sum": total})

    async def _tool_slow(self, args: dict[str, Any], request: Request) -> Message:
        steps, interval = args["steps"], args["interval"]
        token = request.progress_token
        try:
            for step in range(1, steps + 1):
                await asyncio.sleep(interval)
                if token is not None:
                    self.notify(
                        "notifications/progress",
                        {
                            "progressToken": token,
                            "progress": step,
                            "total": steps,
                            "message": f"step {step} of {steps}",
                        },
                    )
        except asyncio.CancelledError:
            diag("slow cancelled")
            raise
        return self._tool_result(f"done after {steps} steps")

    @staticmethod
    def _require_capability(request: Request, method: str) -> None:
        """-32021 unless the stateless request's client declared what ``method`` needs."""
        capability = INPUT_REQUEST_CAPABILITY[method]
        if capability not in request.meta[META_CLIENT_CAPABILITIES]:
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {request.params.get('name')} needs "
                f"{method}, and the request's {META_CLIENT_CAPABILITIES} lacks {capability!r}",
                {"requiredCapabilities": {capability: {}}},
            )

    async def _with_input(self, request: Request, method: str, params: dict[str, Any],
                          finish: Callable[[dict[str, Any]], str]) -> Message:
        """A tool result built from the client's answer to ``method``.

        The handshake era sends the client a request and waits for the answer;
        the stateless era answers ``input_required`` and finishes when the
        retry brings the answer (:meth:`_input_round`).  ``finish`` turns one
        answer into the tool's text.
        """
        if request.stateless:
            return self._input_round(request, method, params, finish)
        answer = await self._ask_client(INPUT_REQUEST_CAPABILITY[method], method, params)
        return self._tool_result(finish(answer))

    def _input_round(self, request: Request, method: str, params: dict[str, Any],
                     finish: Callable[[dict[str, Any]], str]) -> Message:
        """One round of a multi-round-trip request: ask (again), or complete.

        Where the request stands comes from its ``requestState`` alone; without
        one it is a first attempt, and any ``inputResponses`` are ignored as
        unrecognised.  A retry that lacks the answer asked for is asked again
        (the spec's SHOULD), not failed.
        """
        digest = request_digest(request.method, request.params)
        responses = request.params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        rounds = Rounds()
        if "requestState" in request.params:
            try:
                rounds = decode_request_state(request.params["requestState"], digest)
            except ValueError as exc:
                raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from None
            answer = responses.get(input_key(method, rounds.round))
            if answer is not None:
                if not isinstance(answer, dict):
                    raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses."
                                   f"{input_key(method, rounds.round)} must be an object")
                answers = (*rounds.answers, finish(answer))
                if len(answers) >= self.knobs.input_rounds:
                    return self._tool_result("\n".join(answers))
                rounds = Rounds(rounds.round + 1, answers)
        diag(f"{request.params.get('name')}: asking the client for {method} "
             f"(round {rounds.round} of {self.knobs.input_rounds})")
        return {
            "resultType": RESULT_INPUT_REQUIRED,
            "inputRequests": {input_key(method, rounds.round): {"method": method,
                                                                 "params": params}},
            "requestState": encode_request_state(digest, rounds),
        }

    async def _ask_client(self, capability: str, method: str, params: dict[str, Any]) -> Message:
        """Call back into the client, turning every way that can fail into a tool failure."""
        if capability not in self.client_capabilities:
            raise ToolFailure(
                f"The client did not declare the {capability!r} capability, "
                f"so the server may not send {method}."
            )
        try:
            result = await self.request_client(method, params)
        except RpcError as exc:
            raise ToolFailure(
                f"The client answered {method} with error {exc.code}: {exc.message}"
            ) from None
        if not isinstance(result, dict):
            raise ToolFailure(f"The client's {method} result was not an object.")
        return result

    async def _tool_ask_llm(self, args: dict[str, Any], request: Request) -> Message:
        params = {
            "messages": [{"role": "user", "content": {"type": "text", "text": args["prompt"]}}],
            "maxTokens": 100,
        }
        return await self._with_input(request, "sampling/createMessage", params,
                                      lambda answer: _sampled_text(answer.get("content")))

    async def _tool_ask_user(self, args: dict[str, Any], request: Request) -> Message:
        params = {
            "message": args["message"],
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
            },
        }
        return await self._with_input(request, "elicitation/create", params, _elicited_text)

    async def _tool_list_roots(self, args: dict[str, Any], request: Request) -> Message:
        return await self._with_input(request, "roots/list", {}, _root_list_text)

    async def _tool_bump(self, args: dict[str, Any], request: Request) -> Message:
        self._counter += 1
        if COUNTER_URI in self._subscriptions:
            self.notify("notifications/resources/updated", {"uri": COUNTER_URI})
        self._publish("resourceSubscriptions", {"uri": COUNTER_URI}, COUNTER_URI)
        return self._tool_result(f"counter is now {self._counter}")

    async def _tool_toggle_bonus(self, args: dict[str, Any], request: Request) -> Message:
        self._bonus = not self._bonus
        declared = self.capabilities()
        for flag, kind in (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                           ("resourcesListChanged", "resources")):
            if not (declared.get(kind) or {}).get("listChanged"):
                continue
            if self.state != "new":  # a handshake-era session is listening
                self.notify(f"notifications/{kind}/list_changed", {})
            self._publish(flag, {})
        state = "added" if self._bonus else "removed"
        return self._tool_result(f"bonus tool, prompt and resource {state}")

    async def _tool_bonus(self, args: dict[str, Any], request: Request) -> Message:
        return self._tool_result(BONUS_TEXT)

    # ---------------------------------------------------------- resources

    async def _resources_list(self, request: Request) -> Message:
        self._refuse_cursor(request)
        bonus = [self.catalogue.bonus.resource] if self._bonus else []
        return {"resources": [*self.catalogue.resources, *bonus]}

    async def _templates_list(self, request: Request) -> Message:
        self._refuse_cursor(request)
        return {"resourceTemplates": list(self.catalogue.templates)}

    def _resource_text(self, uri: str) -> str | None:
        """The resource's text, or None if there is no such resource."""
        if uri == HELLO_URI:
            return HELLO_TEXT
        if uri == COUNTER_URI:
            return str(self._counter)
        if uri == BONUS_URI and self._bonus:
            return BONUS_TEXT
        if uri.startswith(ECHO_PREFIX) and len(uri) > len(ECHO_PREFIX):
            return unquote(uri[len(ECHO_PREFIX) :])
        return None

    def _resource_exists(self, uri: str) -> bool:
        return self._resource_text(uri) is not None

    def _existing_resource(self, request: Request) -> tuple[str, str]:
        """The requested ``uri`` and its text, or "Resource not found".

        The code is -32002 in the handshake era; 2026-07-28 retired it for
        -32602 (Invalid params).
        """
        uri = request.param("uri", str)
        text = self._resource_text(uri)
        if text is None:
            code = INVALID_PARAMS if request.stateless else RESOURCE_NOT_FOUND
            raise RpcError(code, "Resource not found", {"uri": uri})
        return uri, text

    async def _resources_read(self, request: Request) -> Message:
        uri, text = self._existing_resource(request)
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}

    async def _subscribe(self, request: Request) -> Message:
        uri, _ = self._existing_resource(request)  # only existing resources can be subscribed to
        self._subscriptions.add(uri)
        return {}

    async def _unsubscribe(self, request: Request) -> Message:
        self._subscriptions.discard(request.param("uri", str))
        return {}

    # ------------------------------------------------------------ prompts

    async def _prompts_list(self, request: Request) -> Message:
        self._refuse_cursor(request)
        bonus = [self.catalogue.bonus.prompt] if self._bonus else []
        return {"prompts": [*self.catalogue.prompts, *bonus]}

    async def _prompts_get(self, request: Request) -> Message:
        name = request.param("name", str)
        if name == BONUS and self._bonus:
            return {"messages": [{"role": "user", "content": {"type": "text",
                                                               "text": BONUS_TEXT}}]}
        if name != GREET:
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}")
        arguments = request.params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(
                INVALID_PARAMS, "Invalid params: prompts/get arguments must be an object"
            )
        who = arguments.get("name")
        if not isinstance(who, str) or not who:
            raise RpcError(INVALID_PARAMS, "Missing required argument: name")
        style = arguments.get("style", "casual")
        if style not in GREET_STYLES:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid argument style={style!r}: expected one of {', '.join(GREET_STYLES)}",
            )
        return {
            "description": f"A {style} greeting for {who}",
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": f"Please write a {style} greeting for {who}.",
                    },
                }
            ],
        }

    async def _complete(self, request: Request) -> Message:
        ref = request.param("ref", dict)
        argument = request.param("argument", dict)
        where = "completion/complete params.argument"
        name, prefix = _field(argument, "name", str, where), _field(argument, "value", str, where)
        kind = _field(ref, "type", str, "completion/complete params.ref")
        if kind == "ref/prompt" and ref.get("name") == GREET:
            candidates = GREET_STYLES if name == "style" else ()
        elif kind == "ref/resource" and ref.get("uri") == ECHO_TEMPLATE:
            candidates = ()  # free text: nothing sensible to suggest
        else:
            raise RpcError(INVALID_PARAMS, f"Invalid params: nothing to complete for {ref!r}")
        values = [value for value in candidates if value.startswith(prefix)]
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}

    # ----------------------------------------------------------- shutdown

    async def end_subscriptions(self) -> None:
        """Complete every open ``subscriptions/listen`` request (the server is going away)."""
        for listener in self._listeners.values():
            listener.ended.set()
        if self._listeners:
            # Bounded: a listen response waits only for --delay before it is sent.
            await asyncio.wait(list(self._listeners), timeout=self.knobs.delay + _GOODBYE)

    async def close(self, grace: float = 0.0) -> None:
        """End the session: give running work ``grace`` seconds to finish, then cancel it.

        The grace lets requests that were piped in just before EOF still be
        answered (``printf ... | python -m mcp_nb.lab`` works as a demo).
        Open subscriptions are ended first, so their clients learn that the
        server ended them (a complete result) rather than see the stream drop.
        """
        await self.end_subscriptions()
        if self._tasks and grace > 0:
            await asyncio.wait(list(self._tasks), timeout=grace)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# --------------------------------------------------------------- stdio

_GARBAGE = b"lab server banner: not JSON\n"
#: Seconds that requests still running at stdin EOF get to finish and respond.
_EOF_GRACE = 1.0


def encode_message(message: Message) -> bytes:
    """Compact UTF-8 JSON without raw newlines (stdio lines and SSE data lines alike)."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # lone surrogates survive only as \u escapes
        return json.dumps(message, separators=(",", ":")).encode()


def prepare_process(knobs: Knobs) -> None:
    """Process-level knobs every transport honours, applied before serving starts."""
    if knobs.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for number in range(1, knobs.stderr_chatter + 1):
        diag(f"chatter {number} of {knobs.stderr_chatter} (--stderr-chatter)")


def arrange_exits(knobs: Knobs, stop: Callable[[str], None]) -> None:
    """Call ``stop(reason)`` on SIGTERM (unless ignored) and after --exit-after."""
    loop = asyncio.get_running_loop()
    if not knobs.ignore_sigterm:
        # On Windows this is not implemented and the default SIGTERM handling stays.
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGTERM, stop, "SIGTERM received; exiting")
    if knobs.exit_after is not None:
        loop.call_later(
            knobs.exit_after, stop, f"exiting on my own after {knobs.exit_after:g} s (--exit-after)"
        )


def crash_if_due(knobs: Knobs, received: int) -> None:
    """The --crash-after knob: die abruptly on the Nth message, without any cleanup."""
    if knobs.crash_after is not None and received >= knobs.crash_after:
        diag(f"crashing on purpose after {received} messages (--crash-after)")
        os._exit(3)


class _StdoutWriter:
    """Writes one JSON message per line to stdout; used from the loop thread only."""

    def __init__(self, garbage: bool) -> None:
        self._garbage = garbage
        self._stream = sys.stdout.buffer
        self._broken = False

    def banner(self) -> None:
        """The --garbage-stdout startup line."""
        if self._garbage:
            self._write(_GARBAGE)

    def send(self, message: Message) -> None:
        data = encode_message(message)
        if self._garbage and "method" not in message:  # a response
            data = _GARBAGE + data
        self._write(data + b"\n")

    def _write(self, data: bytes) -> None:
        if self._broken:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (BrokenPipeError, ValueError):
            self._broken = True
            diag("stdout is closed; dropping outgoing messages")
            # Point fd 1 at /dev/null so the interpreter's final flush cannot fail too.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)


def _read_stdin(loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[bytes | str | None]) -> None:
    """Thread body: hand every stdin line to the loop, then ``None`` for EOF.

    It reads through a private reader on fd 0, not ``sys.stdin``: when the
    process exits while this daemon thread is blocked in a read, the interpreter
    flushes ``sys.stdin`` and would abort on the lock the thread still holds.
    """
    stdin = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115 (lives as long as we do)
    try:
        for line in iter(stdin.readline, b""):
            loop.call_soon_threadsafe(inbox.put_nowait, line)
        loop.call_soon_threadsafe(inbox.put_nowait, None)
    except RuntimeError:  # the loop has already closed: nobody is listening
        pass


async def _serve_stdio(knobs: Knobs) -> int:
    loop = asyncio.get_running_loop()
    # Lines (bytes), EOF (None) and reasons to stop (str) arrive through one queue.
    inbox: asyncio.Queue[bytes | str | None] = asyncio.Queue()
    writer = _StdoutWriter(knobs.garbage_stdout)
    session = LabSession(knobs, writer.send)
    arrange_exits(knobs, inbox.put_nowait)
    threading.Thread(target=_read_stdin, args=(loop, inbox), name="lab-stdin", daemon=True).start()
    writer.banner()
    diag(f"mcp_nb lab server ready (pid {os.getpid()})")
    received = 0
    grace = 0.0
    while True:
        item = await inbox.get()
        if isinstance(item, bytes):
            received += 1
            crash_if_due(knobs, received)
            if item.strip():
                session.receive_json(item)
        elif item is None and knobs.ignore_stdin_close:
            diag("stdin closed; staying alive anyway (--ignore-stdin-close)")
        elif item is None:
            diag("stdin closed; finishing in-flight requests, then exiting")
            grace = _EOF_GRACE
            break
        else:
            diag(item)
            break
    await session.close(grace)
    return 0


def serve_stdio(knobs: Knobs) -> int:
    """Serve one session over this process's stdin/stdout; returns the exit code."""
    prepare_process(knobs)
    return asyncio.run(_serve_stdio(knobs))
