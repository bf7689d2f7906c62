"""``--fixtures conformance``: the suite's fixtures, served by the lab in both eras.

Real lab servers: over HTTP, judged by mcp_nb's own client in the handshake
era and by raw httpx in the stateless era (where the wire shape is the point);
over stdio once, to show the menu does not depend on the transport.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_support import ServerProcess, lab_server, lab_session
from test_lab_server import Lab, call, initialize, request
from test_lab_stateless_http import error_of, message, post

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

Message = dict[str, Any]
TASKS = "io.modelcontextprotocol/tasks"
EVERYTHING = {"sampling": {}, "elicitation": {}, "roots": {}}


@pytest.fixture(scope="module")
def fixtures() -> Iterator[ServerProcess]:
    with lab_server("--fixtures", "conformance") as server:
        yield server


def result_of(response: httpx.Response) -> Message:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return body["result"]


async def test_handshake_era_fixtures_through_the_client(fixtures: ServerProcess) -> None:
    async def sample(params: dict) -> dict:
        return {"role": "assistant", "model": "m",
                "content": {"type": "text", "text": "Paris"}}

    async with lab_session(fixtures, on_sampling=sample) as session:
        await session.connect()
        names = {tool.name for tool in await session.list_tools()}
        assert {"test_simple_text", "test_image_content", "json_schema_2020_12_tool",
                "slow_compute"} <= names
        assert (await session.call_tool("test_simple_text")).text == (
            "This is a simple text response for testing.")
        image = (await session.call_tool("test_image_content")).content[0]
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
        sampled = await session.call_tool("test_sampling", {"prompt": "capital?"})
        assert sampled.text == "LLM response: Paris"
        [text] = await session.read_resource("test://template/7/data")
        assert json.loads(text["text"]) == {"id": "7", "templateTest": True,
                                            "data": "Data for ID: 7"}
        prompt = await session.get_prompt("test_prompt_with_arguments",
                                          {"arg1": "hello", "arg2": "world"})
        assert prompt["messages"][0]["content"]["text"] == (
            "Prompt with arguments: arg1='hello', arg2='world'")
        ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
        assert await session.complete(ref, "arg1", "par") == ["paris", "park", "party"]


def test_input_required_rounds_with_a_signed_request_state(fixtures: ServerProcess) -> None:
    url = fixtures.ready_text
    params = {"name": "test_input_required_result_multi_round", "arguments": {}}
    first = result_of(post(url, message(1, "tools/call", params, EVERYTHING)))
    assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["step1"]
    name = {"action": "accept", "content": {"name": "Ada"}}
    missing = result_of(post(url, message(2, "tools/call", {
        **params, "requestState": first["requestState"], "inputResponses": {"other": name}},
        EVERYTHING)))
    assert list(missing["inputRequests"]) == ["step1"]  # asked again, not an error
    second = result_of(post(url, message(3, "tools/call", {
        **params, "requestState": first["requestState"], "inputResponses": {"step1": name}},
        EVERYTHING)))
    assert list(second["inputRequests"]) == ["step2"]
    colour = {"action": "accept", "content": {"color": "teal"}}
    done = result_of(post(url, message(4, "tools/call", {
        **params, "requestState": second["requestState"], "inputResponses": {"step2": colour}},
        EVERYTHING)))
    assert done["resultType"] == "complete"
    assert "Ada" in done["content"][0]["text"] and "teal" in done["content"][0]["text"]
    tampered = second["requestState"].replace(".", "x.", 1)
    refused = post(url, message(5, "tools/call", {
        **params, "requestState": tampered, "inputResponses": {"step2": colour}}, EVERYTHING))
    assert refused.status_code == 400 and error_of(refused)["code"] == -32602


def test_only_declared_capabilities_are_asked_for(fixtures: ServerProcess) -> None:
    params = {"name": "test_input_required_result_capabilities", "arguments": {}}
    asked = result_of(post(fixtures.ready_text,
                           message(1, "tools/call", params, {"sampling": {}})))
    methods = {request["method"] for request in asked["inputRequests"].values()}
    assert methods == {"sampling/createMessage"}


def test_mcp_param_headers_must_mirror_the_annotated_argument(fixtures: ServerProcess) -> None:
    url = fixtures.ready_text
    body = message(1, "tools/call", {"name": "test_header_param",
                                     "arguments": {"region": "Hello"}})
    encoded = "=?base64?" + base64.b64encode(b"Hello").decode() + "?="
    assert result_of(post(url, body, Mcp_Param_Region=encoded))["content"][0]["text"] == (
        "region: Hello")
    for header in (None, "Goodbye", "=?base64?SGVsbG8?="):  # missing, different, bad padding
        refused = post(url, body, Mcp_Param_Region=header)
        assert refused.status_code == 400 and error_of(refused)["code"] == -32020


def wait_for_status(url: str, task_id: str, wanted: str) -> Message:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        task = result_of(post(url, message(9, "tasks/get", {"taskId": task_id},
                                           {"extensions": {TASKS: {}}}), Mcp_Name=task_id))
        if task["status"] == wanted:
            return task
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {wanted}")


def test_tasks_are_created_answered_and_finished(fixtures: ServerProcess) -> None:
    url = fixtures.ready_text
    with_tasks = {**EVERYTHING, "extensions": {TASKS: {}}}
    call_params = {"name": "confirm_delete", "arguments": {"filename": "notes.txt"}}
    created = result_of(post(url, message(1, "tools/call", call_params, with_tasks)))
    assert created["resultType"] == "task" and "result" not in created
    waiting = wait_for_status(url, created["taskId"], "input_required")
    [key] = waiting["inputRequests"]
    ack = result_of(post(url, message(2, "tasks/update", {
        "taskId": created["taskId"],
        "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}},
        with_tasks), Mcp_Name=created["taskId"]))
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    done = wait_for_status(url, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "notes.txt deleted"
    without = post(url, message(3, "tools/call", {"name": "failing_job", "arguments": {}},
                                EVERYTHING))
    assert without.status_code == 400 and error_of(without)["code"] == -32021
    unknown = post(url, message(4, "tasks/get", {"taskId": "nope"}, with_tasks), Mcp_Name="nope")
    assert error_of(unknown)["code"] == -32602


def test_the_fixtures_do_not_depend_on_the_transport() -> None:
    lab = Lab("--fixtures", "conformance")
    try:
        initialize(lab)
        listed = request(lab, call(2, "tools/list"))["result"]["tools"]
        assert "test_simple_text" in {tool["name"] for tool in listed}
        read = request(lab, call(3, "resources/read", {"uri": "test://static-text"}))
        assert read["result"]["contents"][0]["text"] == (
            "This is the content of the static text resource.")
    finally:
        lab.kill()


def test_a_skill_is_listed_got_read_and_walked(fixtures: ServerProcess) -> None:
    url = fixtures.ready_text
    [skill] = result_of(post(url, message(1, "skills/list")))["skills"]
    assert skill["frontmatter"]["name"] == "hello-world" and skill["uri"].endswith(
        "/hello-world/SKILL.md")
    assert result_of(post(url, message(2, "skills/get", {"uri": skill["uri"]})))[
        "skill"] == skill
    for entry in skill["resources"]:  # every file is served, with the digest and size listed
        [contents] = result_of(post(url, message(3, "resources/read", {"uri": entry["uri"]})))[
            "contents"]
        raw = contents["text"].encode()
        assert entry["size"] == len(raw)
        assert entry["digest"] == "sha256:" + hashlib.sha256(raw).hexdigest()
    root = skill["uri"].removesuffix("/SKILL.md")
    children = result_of(post(url, message(4, "resources/directory/read", {"uri": root})))
    assert {"inode/directory", "text/markdown"} == {child["mimeType"]
                                                     for child in children["resources"]}
    not_a_directory = post(url, message(5, "resources/directory/read", {"uri": skill["uri"]}))
    assert error_of(not_a_directory)["code"] == -32602
    unknown = post(url, message(6, "skills/get", {"uri": "skill://nowhere/x/SKILL.md"}))
    assert error_of(unknown)["code"] == -32602
