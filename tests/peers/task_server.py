"""A stdio MCP server that answers some tool calls with tasks (SEP-2663), for client tests.

Standard library only.  Tools: ``quick`` answers at once; ``slow`` makes a task
that is working, then asks for a name (input_required, an elicitation), then
completes with a greeting that also lists the requestState values the client
echoed; ``pushed`` makes a task and ends it at once by a
``notifications/tasks/status``; ``relapse`` makes a task that completes and then
claims to be working again (a move the table forbids).  ``tasks/cancel`` acks
and cancels.  Every task snapshot carries a fresh requestState.
"""

from __future__ import annotations

import json
import sys

STAMP = "2026-01-01T00:00:00Z"
tasks: dict[str, dict] = {}


def out(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def snapshot(task: dict, **extra: object) -> dict:
    task["serial"] += 1
    return {"taskId": task["id"], "status": task["status"], "createdAt": STAMP,
            "lastUpdatedAt": STAMP, "ttlMs": 60_000, "pollIntervalMs": 10,
            "requestState": f"{task['id']}-state-{task['serial']}", **extra}


def advance(task: dict) -> dict:
    """What tasks/get says now, and how the task moves on."""
    task["polls"] += 1
    if task["status"] == "working" and task["kind"] == "slow" and task["polls"] >= 2 \
            and task["name"] is None:
        task["status"] = "input_required"
    elif task["status"] in ("working", "input_required") and task["name"] is not None:
        task["status"] = "completed"
    elif task["kind"] == "relapse" and task["status"] == "completed":
        task["status"] = "working"
    elif task["kind"] == "relapse":
        task["status"] = "completed"
    extra: dict = {}
    if task["status"] == "input_required":
        extra["inputRequests"] = {"who": {"method": "elicitation/create", "params": {
            "message": "Your name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}}}}
    elif task["status"] == "completed":
        text = f"hello {task['name']}; echoed {','.join(task['echoed'])}"
        extra["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    return snapshot(task, **extra)


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if request_id is None:
            continue
        task = tasks.get(params.get("taskId", ""))
        if task is not None and "requestState" in params:
            task["echoed"].append(params["requestState"])
        if method == "initialize":
            result = {"protocolVersion": params["protocolVersion"],
                      "capabilities": {"tools": {},
                                       "extensions": {"io.modelcontextprotocol/tasks": {}}},
                      "serverInfo": {"name": "task-server", "version": "1"}}
        elif method == "tools/call" and params["name"] == "quick":
            result = {"content": [{"type": "text", "text": "at once"}]}
        elif method == "tools/call":
            kind = params["name"]
            task = {"id": f"task-{len(tasks) + 1}", "kind": kind, "status": "working", "polls": 0,
                    "serial": 0, "name": None, "echoed": []}
            tasks[task["id"]] = task
            result = {"resultType": "task", **snapshot(task)}
            out({"jsonrpc": "2.0", "id": request_id, "result": result})
            if kind == "pushed":
                task["status"], task["name"] = "completed", "pushed"
                out({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                     "params": snapshot(task, result={"content": [{"type": "text",
                                                                  "text": "pushed"}]})})
            continue
        elif method == "tasks/get" and task is not None:
            result = {"resultType": "complete", **advance(task)}
        elif method == "tasks/update" and task is not None:
            task["name"] = params["inputResponses"]["who"]["content"]["name"]
            result = {"resultType": "complete"}
        elif method == "tasks/cancel":
            if task is not None and task["status"] in ("working", "input_required"):
                task["status"] = "cancelled"
            result = {"resultType": "complete"}
        else:
            out({"jsonrpc": "2.0", "id": request_id,
                 "error": {"code": -32601, "message": f"Method not found: {method}"}})
            continue
        out({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
