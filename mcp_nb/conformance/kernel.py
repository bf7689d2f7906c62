"""``python -m mcp_nb.conformance --kernel URL``: the scenario typed as magics into a real kernel.

The players in :mod:`.scenarios` drive the public Python API.  Notebook users take
another path: ``%mcp connect URL`` in an ipykernel, whose magics parse the line,
build the transport and run the session on the background loop.  A scenario that
passes only on the API's path is still a failure for them, so a handful of client
scenarios are played here the way a person would play them: each step is a cell
with a ``%mcp`` line in it, sent to a real kernel started with this Python.

Only the lines are composed here (tool names and arguments read from what the
kernel printed); what goes on the wire is entirely the magics' doing.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol.versions import STATELESS_VERSIONS
from .registry import Assignment
from .scenarios import sample_arguments

#: Seconds one cell may take (a kernel's first cell imports mcp_nb and its widgets).
CELL_TIMEOUT = 60.0


#: What the magic's argument check calls its refusal (``McpCellError.rule``, as
#: :data:`mcp_nb.notebook.magics.operations.ARGUMENTS_NOT_IN_SCHEMA`; not imported, so the
#: harness does not load IPython for one name).
ARGUMENTS_NOT_IN_SCHEMA = "arguments-not-in-schema"

# Read from the exception the failed cell left in the kernel: its structure, not its text.
_ERROR_FIELDS = {name: f"getattr(__import__('sys').last_value, {name!r}, None)"
                 for name in ("rule", "override")}


class CellFailed(RuntimeError):
    """A cell ended in an error: the magic's one-line reason, or the traceback's last line.

    ``rule`` and ``override`` are the error's own fields (``McpCellError.rule`` and
    ``.override``), read in the kernel: a player decides by them, never by the wording.
    """

    def __init__(self, message: str, *, rule: str | None = None,
                 override: str | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.override = override


class Kernel:
    """A real ipykernel on this Python (the ``python3`` kernel of the running interpreter)."""

    def __init__(self) -> None:
        from jupyter_client.manager import start_new_kernel  # only this path needs it

        self.manager, self.client = start_new_kernel(kernel_name="python3")

    def run(self, code: str) -> str:
        """Run one cell; return what it printed.  Raises :class:`CellFailed` on an error."""
        msg_id = self.client.execute(code)
        printed: list[str] = []
        error: Mapping[str, Any] | None = None
        while True:
            message = self.client.get_iopub_msg(timeout=CELL_TIMEOUT)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream" and content.get("name") == "stdout":
                printed.append(content["text"])
            elif kind == "error":
                error = content
            elif kind == "status" and content["execution_state"] == "idle":
                break
        if error is not None:
            raise CellFailed(f"cell {code!r} failed: {error.get('ename')}: "
                             f"{error.get('evalue')}", **self._last_error_fields())
        return "".join(printed)

    def _last_error_fields(self) -> dict[str, Any]:
        """``rule`` and ``override`` of the exception the last cell raised (None if it has none).

        Asked as user expressions of a silent request, which the kernel evaluates
        without running a cell of its own or touching the history.
        """
        msg_id = self.client.execute("", silent=True, store_history=False,
                                     user_expressions=_ERROR_FIELDS)
        while True:
            reply = self.client.get_shell_msg(timeout=CELL_TIMEOUT)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        found = reply["content"].get("user_expressions") or {}
        return {name: _literal(found.get(name)) for name in _ERROR_FIELDS}

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


def _literal(evaluated: Mapping[str, Any] | None) -> Any:
    """The value of a user expression that evaluated to a string or None."""
    if not evaluated or evaluated.get("status") != "ok":
        return None
    try:
        return ast.literal_eval(evaluated["data"]["text/plain"])
    except (ValueError, SyntaxError):  # not a plain value: not a field of ours
        return None


def connect_line(assignment: Assignment, *options: str) -> str:
    """``%mcp connect URL`` with what the wire version the suite asked for takes.

    No version, or a stateless one: ``--era auto`` (probe, fall back), as a user
    reaching a server of either era types it; a handshake version: offered with
    ``--version`` in the magics' default era.
    """
    version = assignment.protocol_version
    words = ["%mcp", "connect", assignment.server_url]
    if version is None or version in STATELESS_VERSIONS:
        words += ["--era", "auto"]
    if version is not None:
        words += ["--version", version]
    return " ".join([*words, *options])


def _listed(kernel: Kernel, listing: str, fields: str) -> list[list[Any]]:
    """``%mcp tools`` (or resources, prompts) in a cell, and the fields asked for of each."""
    return json.loads(kernel.run(
        f"_listed = %mcp {listing}\nimport json\nprint(json.dumps([[{fields}] for item in "
        "_listed]))"))


def _call_each_tool(kernel: Kernel) -> None:
    for name, schema in _listed(kernel, "tools", "item.name, item.inputSchema"):
        kernel.run(f"%mcp call {name} {json.dumps(sample_arguments(schema))}")


def _connect_only(kernel: Kernel, assignment: Assignment) -> None:
    kernel.run(connect_line(assignment))


def _call_tools(kernel: Kernel, assignment: Assignment) -> None:
    kernel.run(connect_line(assignment))
    _call_each_tool(kernel)


def _call_tools_from_context(kernel: Kernel, assignment: Assignment) -> None:
    kernel.run(connect_line(assignment))
    kernel.run("%mcp tools")  # the x-mcp-header annotations arrive with the list
    for call in assignment.context.get("toolCalls", []):
        line = f"%mcp call {call['name']} {json.dumps(call.get('arguments') or {})}"
        try:
            kernel.run(line)
        except CellFailed as refused:
            # The suite sends some values outside the tool's inputSchema on purpose (a
            # null for a boolean: its header must be left out).  The magic checks the
            # arguments first and refuses; a user who means it adds --force, as here.
            if refused.rule != ARGUMENTS_NOT_IN_SCHEMA or refused.override != "force":
                raise
            kernel.run(f"{line} --force")


def _use_every_primitive(kernel: Kernel, assignment: Assignment) -> None:
    kernel.run(connect_line(assignment))
    _call_each_tool(kernel)
    for (uri,) in _listed(kernel, "resources", "item.uri"):
        kernel.run(f"%mcp read {uri}")
    for (name,) in _listed(kernel, "prompts", "item.name"):
        kernel.run(f"%mcp prompt {name}")


def _authorize_and_call(kernel: Kernel, assignment: Assignment) -> None:
    # The suite's authorization server approves at once: the auto-approved callback
    # follows its redirect, as the lab's does in the tutorials.
    kernel.run(connect_line(assignment, "--auth", "--auth-callback", "auto-approved"))
    _call_each_tool(kernel)


#: The scenarios played through the magics, and how.
KERNEL_PLAYERS: dict[str, Callable[[Kernel, Assignment], None]] = {
    "initialize": _connect_only,
    "tools_call": _call_tools,
    "sse-retry": _call_tools,
    "http-custom-headers": _call_tools_from_context,
    "http-standard-headers": _use_every_primitive,
    "auth/metadata-default": _authorize_and_call,
}


def play_in_kernel(assignment: Assignment) -> None:
    """Play ``assignment`` as cells in a new kernel; shut the session, then the kernel, down."""
    player = KERNEL_PLAYERS[assignment.scenario]
    kernel = Kernel()
    try:
        kernel.run("%load_ext mcp_nb")
        player(kernel, assignment)
        kernel.run("%mcp shutdown")
    finally:
        kernel.close()
