"""The checkup's protocol-feature phase on the main session: each feature area, concurrently.

The main session, in whichever era it speaks, has its resources
(:mod:`~mcp_nb.check.resources`), prompts and completion
(:mod:`~mcp_nb.check.prompts`) judged here, and, only for tools the user allowed,
its tool calls (:mod:`~mcp_nb.check.tool_calls`).  What only a handshake-era
session can be asked runs with the lifecycle checks instead
(:mod:`~mcp_nb.check.handshake_features`).

Every read here is side-effect free by the spec (``resources/read``,
``prompts/get``, ``completion/complete``, ``logging/setLevel``); ``tools/call``
is only ever sent for tools ``--call-tools`` names.

Example (what the runner does with it)::

    report = await run_checkup([sys.executable, "-m", "mcp_nb.lab"], call_tools="all")
    report.result("tools.progress").outcome   # 'pass': slow's progress increased
"""

from __future__ import annotations

from typing import Any

import anyio

from ..client import ClientSession
from .prompts import PROMPT_CHECKS, PromptChecks
from .resources import RESOURCE_CHECKS, ResourceChecks
from .tool_calls import ToolCallChecks


class FeatureChecks(ResourceChecks, PromptChecks, ToolCallChecks):
    """The main session's feature areas, started together; mixed into the runner's
    ``_Checkup``."""

    async def protocol_features(self, main: ClientSession, listed: dict[str, list[Any]]) -> None:
        """Resources, prompts and completion on the main session, concurrently."""
        declared = main.capabilities.server
        async with anyio.create_task_group() as group:
            for kind, checks, run in (("resources", RESOURCE_CHECKS, self.resources),
                                      ("prompts", PROMPT_CHECKS, self.prompts)):
                if kind in declared and kind in listed:
                    group.start_soon(run, main, listed[kind])
                elif kind in declared:
                    # Declared but its list failed: capabilities.<kind> reports that; the
                    # reason here must not say it was never declared.
                    self.skip(checks, f"the server declares {kind} but its list could not "
                              f"be read (see capabilities.{kind})")
                else:
                    self.skip(checks, f"the server does not declare {kind}")
            group.start_soon(self.completion, main, listed.get("prompts") or [])
