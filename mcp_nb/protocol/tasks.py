"""The tasks extension (SEP-2663): task statuses, the table of their moves, task snapshots.

A server that negotiated the extension may answer a ``tools/call`` with a
*task handle* (``resultType: "task"``) instead of the result; the client then
polls ``tasks/get``, answers the task's input requests with ``tasks/update``
and may ask ``tasks/cancel``, until the task reaches a terminal status
(the result, or the JSON-RPC error, is inlined in that last snapshot).  The
server decides whether to make a task; the client only declares that it can
cope (``capabilities.extensions["io.modelcontextprotocol/tasks"] = {}``).
There is no ``tasks/result`` and no ``tasks/list`` in this extension (both
belonged to the 2025-11-25 tasks utility it supersedes).

As with the session's lifecycle (:mod:`mcp_nb.protocol.lifecycle`), the
statuses a task may move between are data, :data:`TASK_TRANSITIONS`, so the
code that judges what a server reports and the diagram that teaches it read
the same table.  Everything here is pure: the session feeds it what arrived.

Example::

    >>> tracker = TaskTracker()
    >>> tracker.observe(parse_task({"taskId": "t1", "status": "working",
    ...     "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
    ...     "ttlMs": None}))
    >>> tracker.observe(parse_task({"taskId": "t1", "status": "completed",
    ...     "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:05Z",
    ...     "ttlMs": None, "result": {"content": []}}))
    >>> [status.value for status in tracker.path], tracker.done
    (['working', 'completed'], True)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..i18n import N_

#: The extension's identifier (capabilities.extensions key).
EXTENSION = "io.modelcontextprotocol/tasks"
#: The ``resultType`` of a result that is a task handle instead of the result.
RESULT_TYPE_TASK = "task"
#: Requests a server may answer with a task (this version of the extension).
TASK_METHODS = frozenset({"tools/call"})
#: The extension's own requests; over HTTP their ``Mcp-Name`` is ``params.taskId``.
TASK_REQUESTS = ("tasks/get", "tasks/update", "tasks/cancel")
STATUS_NOTIFICATION = "notifications/tasks/status"
#: Poll this often when the server suggests nothing (milliseconds).
DEFAULT_POLL_MS = 1000


class TaskStatus(enum.Enum):
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


@dataclass(frozen=True)
class TaskTransition:
    """One move a task's status may make, and what it means."""

    source: TaskStatus
    target: TaskStatus
    meaning: str


#: Every status change a server may report.  A terminal status is final: nothing
#: leaves it.  Reporting the same status again (a poll with no news) is no move.
TASK_TRANSITIONS: tuple[TaskTransition, ...] = (
    TaskTransition(TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED,
                   N_("the work needs input: inputRequests to answer with tasks/update")),
    TaskTransition(TaskStatus.INPUT_REQUIRED, TaskStatus.WORKING,
                   N_("the input arrived; the work goes on")),
    TaskTransition(TaskStatus.WORKING, TaskStatus.COMPLETED,
                   N_("done: the result is inlined (a tool's isError too)")),
    TaskTransition(TaskStatus.INPUT_REQUIRED, TaskStatus.COMPLETED,
                   N_("done without the input it asked for")),
    TaskTransition(TaskStatus.WORKING, TaskStatus.FAILED,
                   N_("a JSON-RPC error ended it: the error is inlined")),
    TaskTransition(TaskStatus.INPUT_REQUIRED, TaskStatus.FAILED,
                   N_("a JSON-RPC error ended it while it waited for input")),
    TaskTransition(TaskStatus.WORKING, TaskStatus.CANCELLED,
                   N_("cancelled (tasks/cancel asked; the server decides)")),
    TaskTransition(TaskStatus.INPUT_REQUIRED, TaskStatus.CANCELLED,
                   N_("cancelled while it waited for input")),
)
_ALLOWED = {(t.source, t.target) for t in TASK_TRANSITIONS}


@dataclass(frozen=True)
class TaskSnapshot:
    """What one message said about a task (``CreateTaskResult``, ``tasks/get``, a notification)."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    #: How long the server keeps the task after it ends (``ttlMs``, integer milliseconds).
    ttl_ms: int | None = None
    status_message: str | None = None
    #: How often the server suggests polling (``pollIntervalMs``, integer milliseconds).
    poll_interval_ms: int | None = None
    #: Opaque; echoed on the next tasks/* request, absent if the message had none.
    request_state: str | None = None
    #: Completed: the original request's result (for tools/call, a CallToolResult).
    result: dict[str, Any] | None = None
    #: Failed: the JSON-RPC error object (code, message, data).
    error: dict[str, Any] | None = None
    #: Input required: key → server-to-client request (method, params).
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)


def is_task_handle(result: Mapping[str, Any]) -> bool:
    """Is this result a task handle (``resultType: "task"``) rather than the result itself?"""
    return result.get("resultType") == RESULT_TYPE_TASK


def parse_task(data: Mapping[str, Any], *, created: bool = False) -> TaskSnapshot:
    """Read a task object; :class:`ValueError` saying what is wrong with a malformed one.

    ``created``: the object is a ``CreateTaskResult``, which must not carry
    ``result``, ``error`` or ``inputRequests`` (they are refused, not read).
    """
    if not isinstance(data, Mapping):
        raise ValueError("a task must be an object")
    task_id = data.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise ValueError("a task needs a non-empty string taskId")
    try:
        status = TaskStatus(data.get("status"))
    except ValueError:
        raise ValueError(f"task {task_id}: unknown status {data.get('status')!r} (one of "
                         f"{', '.join(s.value for s in TaskStatus)})") from None
    for key in ("createdAt", "lastUpdatedAt"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"task {task_id}: {key} must be an ISO 8601 string")
    if created:
        extra = [key for key in ("result", "error", "inputRequests") if key in data]
        if extra:
            raise ValueError(f"task {task_id}: a CreateTaskResult must not carry "
                             f"{', '.join(extra)} (they belong to tasks/get)")
    result, error = data.get("result"), data.get("error")
    requests = data.get("inputRequests")
    if status is TaskStatus.COMPLETED and not created and not isinstance(result, Mapping):
        raise ValueError(f"task {task_id}: a completed task inlines its result object")
    if status is TaskStatus.FAILED and not created and not isinstance(error, Mapping):
        raise ValueError(f"task {task_id}: a failed task inlines its JSON-RPC error object")
    if status is TaskStatus.INPUT_REQUIRED and not created and not isinstance(requests, Mapping):
        raise ValueError(f"task {task_id}: an input_required task lists its inputRequests")
    ttl = data.get("ttlMs")
    poll = data.get("pollIntervalMs")
    message, state = data.get("statusMessage"), data.get("requestState")
    return TaskSnapshot(
        task_id, status, data["createdAt"], data["lastUpdatedAt"],
        ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
        status_message=message if isinstance(message, str) else None,
        poll_interval_ms=poll if isinstance(poll, int) and not isinstance(poll, bool) else None,
        request_state=state if isinstance(state, str) else None,
        result=dict(result) if status is TaskStatus.COMPLETED and not created else None,
        error=dict(error) if status is TaskStatus.FAILED and not created else None,
        input_requests=(dict(requests) if status is TaskStatus.INPUT_REQUIRED
                        and isinstance(requests, Mapping) and not created else {}),
    )


class TaskTracker:
    """One task's state as the client knows it: latest snapshot, path, requestState."""

    def __init__(self) -> None:
        self.latest: TaskSnapshot | None = None
        #: Statuses in the order they were seen (repeats collapsed).
        self.path: list[TaskStatus] = []
        #: Input request keys already answered (keys are unique over a task's life).
        self.answered: set[str] = set()

    @property
    def done(self) -> bool:
        return self.latest is not None and self.latest.status.terminal

    @property
    def request_state(self) -> str | None:
        """What the next tasks/* request echoes: the most recent message's, or nothing."""
        return self.latest.request_state if self.latest is not None else None

    def observe(self, snapshot: TaskSnapshot) -> str | None:
        """Take a new snapshot; returns what is wrong with the move, or None if it is allowed.

        A move the table does not allow (out of a terminal status, say) is
        reported but the snapshot is still taken: the server's word is what
        the client has.
        """
        previous = self.latest.status if self.latest is not None else None
        if self.latest is not None and snapshot.task_id != self.latest.task_id:
            return (f"a snapshot of task {snapshot.task_id} arrived for task "
                    f"{self.latest.task_id}; ignored")
        self.latest = snapshot
        if previous == snapshot.status:
            return None
        self.path.append(snapshot.status)
        if previous is None or (previous, snapshot.status) in _ALLOWED:
            return None
        return (f"task {snapshot.task_id} moved from {previous.value} to "
                f"{snapshot.status.value}, which the task's table does not allow"
                + (" (a terminal status is final)" if previous.terminal else ""))

    def unanswered(self) -> dict[str, dict[str, Any]]:
        """The latest snapshot's input requests not answered yet."""
        if self.latest is None:
            return {}
        return {key: request for key, request in self.latest.input_requests.items()
                if key not in self.answered}
