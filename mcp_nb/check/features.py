"""The checkup's feature phase on the main session: its lists, then each feature area.

The main session, in whichever era it speaks, first has its three lists read
(:mod:`~mcp_nb.check.lists`, concurrently, as JSON-RPC allows) and, in the
stateless era, one probe of its own (:func:`~mcp_nb.check.stateless_rules.probe_stateless`);
then, concurrently, what the lists hold is judged: resources
(:mod:`~mcp_nb.check.resources`), prompts and completion
(:mod:`~mcp_nb.check.prompts`), tools (:mod:`~mcp_nb.check.tools`) and, only for
tools the user allowed, their calls (:mod:`~mcp_nb.check.tool_calls`).  What only
a handshake-era session can be asked runs with the lifecycle checks instead
(:mod:`~mcp_nb.check.handshake_features`).

Every read here is side-effect free by the spec (``resources/read``,
``prompts/get``, ``completion/complete``); ``tools/call`` is only ever sent for
tools ``--call-tools`` names.

Example (what the runner does with it)::

    report = await run_checkup([sys.executable, "-m", "mcp_nb.lab"], call_tools="all")
    report.result("tools.progress").outcome   # 'pass': slow's progress increased
"""

from __future__ import annotations

from typing import Any

import anyio

from ..client import ClientSession
from ..i18n import _
from .lists import ListChecks
from .prompts import COMPLETION_CHECKS, PROMPT_CHECKS, PromptChecks
from .resources import RESOURCE_CHECKS, ResourceChecks
from .stateless_rules import STATELESS_PROBE_CHECKS, probe_stateless
from .tool_calls import TOOL_CALL_CHECKS
from .tools import TOOL_LIST_CHECKS, ToolChecks


class FeatureChecks(ListChecks, ResourceChecks, PromptChecks, ToolChecks):
    """The main session's feature phase; mixed into the runner's ``_Checkup``."""

    async def features(self, main: ClientSession) -> None:
        """The lists, the stateless era's probe, then every feature area concurrently (each
        area guarded: a crash in one is its own checks' error, the others run on)."""
        listed = await self.capability_lists(main)  # what every area needs: not guarded apart
        await self.guarded(STATELESS_PROBE_CHECKS, probe_stateless, self, main)
        async with anyio.create_task_group() as group:
            group.start_soon(self.protocol_features, main, listed)
            if "tools" in listed:
                group.start_soon(self.guarded, (*TOOL_LIST_CHECKS, *TOOL_CALL_CHECKS),
                                 self.tools, main, listed["tools"])
            else:
                self.skip([*TOOL_LIST_CHECKS, *TOOL_CALL_CHECKS], _("the server lists no tools"))

    async def protocol_features(self, main: ClientSession, listed: dict[str, list[Any]]) -> None:
        """Resources, prompts and completion on the main session, concurrently."""
        declared = main.capabilities.server
        async with anyio.create_task_group() as group:
            for kind, checks, run in (("resources", RESOURCE_CHECKS, self.resources),
                                      ("prompts", PROMPT_CHECKS, self.prompts)):
                if kind in declared and kind in listed:
                    group.start_soon(self.guarded, checks, run, main, listed[kind])
                elif kind in declared:
                    # Declared but its list failed: capabilities.<kind> reports that; the
                    # reason here must not say it was never declared.
                    self.skip(checks, _("the server declares {kind} but its list could not "
                              "be read (see capabilities.{kind}-served)").format(kind=kind))
                else:
                    self.skip(checks, _("the server does not declare {kind}").format(kind=kind))
            group.start_soon(self.guarded, COMPLETION_CHECKS, self.completion, main,
                             listed.get("prompts") or [])
