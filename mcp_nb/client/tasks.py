"""Tasks on the client (SEP-2663): a handle per task a server made, polled and answered to its end.

When a session declares the extension (``ClientSession(tasks=True)``), a
server may answer ``tools/call`` with a task handle instead of the result.
:meth:`ClientSession.call_tool <mcp_nb.client.ClientSession.call_tool>` then
follows the task to its end and returns the result as if it had come at once;
:meth:`ClientSession.start_tool <mcp_nb.client.ClientSession.start_tool>`
returns the :class:`Task` itself, to poll, answer and cancel step by step::

    started = await session.start_tool("slow_compute", {"seconds": 5})
    if isinstance(started, Task):
        await started.refresh()          # tasks/get: started.status, started.snapshot
        await started.cancel()           # tasks/cancel (the server decides)
        result = await started.wait()    # poll until completed, failed or cancelled

Every snapshot (from ``tasks/get``, the create result, or a
``notifications/tasks/status``) goes through the task's own table
(:data:`mcp_nb.protocol.tasks.TASK_TRANSITIONS`); a move it does not allow is a
``task-transition-invalid`` finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..i18n import _
from ..protocol import tasks as rules
from ..protocol.errors import McpError
from ..protocol.observers import Observers
from ..protocol.tasks import TaskSnapshot, TaskStatus, TaskTracker
from .errors import InvalidResult, ServerError

if TYPE_CHECKING:
    from .parts import SessionParts
    from .session import ClientSession


class TaskFailed(ServerError):
    """The task ended ``failed``: its inlined JSON-RPC error, as a :class:`ServerError`."""


class TaskCancelled(McpError):
    """The task ended ``cancelled`` (``task_id`` says which)."""

    def __init__(self, task_id: str, message: str) -> None:
        self.task_id = task_id
        super().__init__(message)


class Task:
    """One task a server made for one request; see the module docstring."""

    def __init__(self, session: ClientSession, parts: SessionParts, method: str,
                 created: TaskSnapshot) -> None:
        self.session = session
        self._record = parts.record
        # The stateless era's input rounds answer a task's input requests the same way.
        self._answer_input_requests = parts.stateless.answer_input_requests
        #: The request the task stands for (``tools/call``).
        self.method = method
        self.task_id = created.task_id
        self.tracker = TaskTracker()
        #: Told of every snapshot taken (after the table judged it); errors are contained.
        self.observers: Observers[TaskSnapshot] = Observers()
        self.observers.on_error = lambda observer, error: self._record.observer_failed(
            "task observer", observer, error)
        self._take(created, "created")

    def __repr__(self) -> str:
        return f"<Task {self.task_id} {self.method} {self.status.value}>"

    @property
    def snapshot(self) -> TaskSnapshot:
        assert self.tracker.latest is not None
        return self.tracker.latest

    @property
    def status(self) -> TaskStatus:
        return self.snapshot.status

    @property
    def done(self) -> bool:
        return self.tracker.done

    def on_status(self, callback: Callable[[TaskSnapshot], Any]) -> Callable[[], None]:
        """Call ``callback`` with every new snapshot; returns an unsubscribe function."""
        return self.observers.add(callback)

    def _params(self, **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"taskId": self.task_id, **extra}
        if self.tracker.request_state is not None:  # the latest message's, never an older one
            params["requestState"] = self.tracker.request_state
        return params

    def _take(self, snapshot: TaskSnapshot, source: str) -> None:
        """Judge a snapshot by the task's table, record it, tell the observers."""
        before = self.tracker.latest.status if self.tracker.latest is not None else None
        problem = self.tracker.observe(snapshot)
        record = self._record
        if problem is not None:
            record.finding("task-transition-invalid", "server", problem, source)
        if snapshot.status != before:
            message = f": {snapshot.status_message}" if snapshot.status_message else ""
            record.note(
                "task status",
                _("task {task_id} ({source}) is {status}{message}").format(
                    task_id=self.task_id, source=source, status=snapshot.status.value,
                    message=message))
        self.observers.notify(snapshot)

    def take_notification(self, params: dict[str, Any]) -> None:
        """A ``notifications/tasks/status`` for this task (called by the session)."""
        try:
            snapshot = rules.parse_task(params)
        except ValueError as exc:
            self._record.finding("task-result-invalid", "server", str(exc), params)
            return
        self._take(snapshot, "notification")

    async def refresh(self, **options: Any) -> TaskSnapshot:
        """``tasks/get``: the task's current snapshot (result or error inlined at the end)."""
        answer = await self.session.request("tasks/get", self._params(), **options)
        try:
            snapshot = rules.parse_task(answer)
        except ValueError as exc:
            self._record.finding("task-result-invalid", "server", str(exc), answer)
            raise InvalidResult(f"tasks/get: {exc}") from None
        self._take(snapshot, "tasks/get")
        return snapshot

    async def update(self, input_responses: dict[str, Any], **options: Any) -> None:
        """``tasks/update``: answers to the task's input requests (acknowledged, applied later)."""
        await self.session.request(
            "tasks/update", self._params(inputResponses=input_responses), **options)
        self.tracker.answered.update(input_responses)

    async def cancel(self, **options: Any) -> None:
        """``tasks/cancel``: ask the server to cancel (acknowledged; it decides, polls tell)."""
        await self.session.request("tasks/cancel", self._params(), **options)
        self._record.note(
            "task cancel",
            _("asked the server to cancel task {task_id}; the next snapshots tell what it "
              "did").format(task_id=self.task_id))

    async def wait(self, *, answer_inputs: bool = True,
                   poll_interval: float | None = None) -> dict[str, Any]:
        """Poll until the task ends; the result of the original request.

        Input requests are answered with the session's handlers (as the
        stateless era's input rounds are) unless ``answer_inputs`` is False.
        Polls as often as the server suggests (``pollIntervalMs``)
        unless ``poll_interval`` (seconds) is given.  Raises
        :class:`TaskFailed` or :class:`TaskCancelled` for those ends.
        """
        while not self.done:
            pending = self.tracker.unanswered() if answer_inputs else {}
            if pending:
                answers = await self._answer_input_requests(
                    f"task {self.task_id}", pending)
                await self.update(answers)
            else:
                suggested = self.snapshot.poll_interval_ms or rules.DEFAULT_POLL_MS
                await anyio.sleep(poll_interval if poll_interval is not None
                                  else suggested / 1000)
            if not self.done:  # a status notification may have ended it meanwhile
                await self.refresh()
        return self.outcome()

    def outcome(self) -> dict[str, Any]:
        """The ended task's result; :class:`TaskFailed` / :class:`TaskCancelled` otherwise."""
        snapshot = self.snapshot
        if snapshot.status is TaskStatus.COMPLETED:
            assert snapshot.result is not None
            return snapshot.result
        if snapshot.status is TaskStatus.FAILED:
            error = snapshot.error or {}
            raise TaskFailed(self.method, int(error.get("code", 0)),
                             str(error.get("message", "")), error.get("data"))
        if snapshot.status is TaskStatus.CANCELLED:
            raise TaskCancelled(self.task_id, _("{method}: task {id} was cancelled").format(
                method=self.method, id=self.task_id) + (f": {snapshot.status_message}"
                                                         if snapshot.status_message else ""))
        raise RuntimeError(_("task {id} has not ended (it is {status})").format(
            id=self.task_id, status=snapshot.status.value))


def tasks_declared(session: ClientSession) -> bool:
    """Did this client declare the tasks extension (``ClientSession(tasks=True)``)?"""
    return rules.EXTENSION in (session.client_capabilities.get("extensions") or {})


def task_handle_problem(session: ClientSession, method: str) -> str | None:
    """Why a task handle may not answer ``method`` in this session; None if it may."""
    if not tasks_declared(session):
        return (f"the server answered {method} with a task handle, but this client did not "
                "declare the tasks extension (a server must not send one then)")
    if method not in rules.TASK_METHODS:
        return (f"{method} cannot be answered with a task handle (only "
                f"{', '.join(sorted(rules.TASK_METHODS))} can)")
    return None


def open_task(session: ClientSession, parts: SessionParts, method: str,
              result: dict[str, Any]) -> Task:
    """The :class:`Task` for a task handle answering ``method``; :class:`InvalidResult` if bad."""
    problem = task_handle_problem(session, method)
    if problem is None:
        try:
            created = rules.parse_task(result, created=True)
        except ValueError as exc:
            problem = str(exc)
    if problem is not None:
        parts.record.finding("task-result-invalid", "server", problem, result)
        raise InvalidResult(f"{method}: {problem}")
    task = Task(session, parts, method, created)
    session.tasks[task.task_id] = task
    return task
