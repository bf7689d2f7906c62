"""``%mcp task``: a task the server made (SEP-2663) as a live status diagram with Cancel."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ...i18n import N_, _
from ..request_views import TaskView
from .table import CommandGroup, McpCellError, Parser

if TYPE_CHECKING:
    from .magic import McpMagics

GROUP = CommandGroup()


def _task_arguments(p: Parser) -> None:
    p.add_argument("id", nargs="?", help=N_("the task id (default: the latest task)"))


@GROUP.command("task", N_("show a task of the current session (connect --tasks, then call a "
                          "task-making tool with --background): its status diagram, Refresh, "
                          "Cancel (tasks/cancel)"), arguments=_task_arguments)
def task(mcp: McpMagics, args: argparse.Namespace) -> TaskView:
    hosted = mcp.session()
    tasks = hosted.session.tasks
    if not tasks:
        raise McpCellError(_("no tasks in this session: connect with --tasks and call a "
                             "tool the server runs as a task"))
    if args.id is None:
        return TaskView(list(tasks.values())[-1], hosted.loop.submit)
    if args.id not in tasks:
        raise McpCellError(_("no task {id}; this session has {tasks}").format(
            id=repr(args.id), tasks=", ".join(tasks)))
    return TaskView(tasks[args.id], hosted.loop.submit)
