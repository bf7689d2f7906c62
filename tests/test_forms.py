"""Schema-generated forms: tool calls from a form, and a person answering the server."""

from __future__ import annotations

import sys
import time

import ipywidgets as w
import pytest

from mcp_nb.notebook.forms import SchemaForm

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "who"},
        "count": {"type": "integer", "default": 3},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "mood": {"enum": ["calm", "busy"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "sizes": {"type": "array", "items": {"type": "number"}},
        "where": {"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]},
        "extra": {"oneOf": [{"type": "string"}, {"type": "number"}]},
    },
    "required": ["name", "ratio"],
}


def field(form: SchemaForm, name: str):
    return next(f for f in form.fields if f.name == name)


def test_every_schema_type_gets_a_widget_and_reads_back() -> None:
    form = SchemaForm(SCHEMA)
    kinds = {f.name: type(f.widget) for f in form.fields}
    assert kinds["name"] is w.Text and kinds["count"] is w.IntText
    assert kinds["ratio"] is w.FloatText and kinds["loud"] is w.Checkbox
    assert kinds["mood"] is w.Dropdown and kinds["tags"] is w.Text
    assert kinds["where"] is w.VBox and kinds["extra"] is w.Textarea
    # Untouched optional fields are left out; required and defaulted ones are in.
    assert form.value() == {"name": "", "count": 3, "ratio": 0, "mood": "calm",
                            "where": {"city": ""}}
    field(form, "name").widget.value = "Ada"
    field(form, "ratio").widget.value = 0.5
    field(form, "loud").widget.value = True
    field(form, "mood").widget.value = "busy"
    field(form, "tags").widget.value = "a, b ,c"
    field(form, "sizes").widget.value = "1, 2.5"
    field(form, "where").nested.fields[0].widget.value = "Paris"
    field(form, "extra").widget.value = "42"
    assert form.value() == {"name": "Ada", "count": 3, "ratio": 0.5, "loud": True,
                            "mood": "busy", "tags": ["a", "b", "c"], "sizes": [1.0, 2.5],
                            "where": {"city": "Paris"}, "extra": 42}
    assert form.signature().startswith("name: string*, count: integer, ratio: number*")


def test_bad_input_names_the_field() -> None:
    form = SchemaForm(SCHEMA)
    field(form, "extra").widget.value = "{not json"
    with pytest.raises(ValueError, match="extra: not valid JSON"):
        form.value()
    field(form, "extra").widget.value = ""
    field(form, "sizes").widget.value = "1, two"
    with pytest.raises(ValueError, match="sizes: every item must be a number"):
        form.value()


def test_tool_form_calls_the_tool(mcp) -> None:
    mcp("connect formlab")
    form = mcp("form add")
    assert repr(form) == "ToolForm: add(a: number*, b: number*)"
    field(form.form, "a").widget.value = 2
    field(form.form, "b").widget.value = 3
    form.button.click()
    deadline = time.monotonic() + 10
    while form.last_result is None:
        assert time.monotonic() < deadline, form.status.value
        time.sleep(0.02)
    assert form.last_result.text == "5"
    assert "<pre>5</pre>" in form.result.value and form.status.value == "done"


def _wait_for_question(inbox, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not inbox.pending:
        assert time.monotonic() < deadline, "the server's request never reached the inbox"
        time.sleep(0.02)
    return inbox.pending[0]


def test_a_person_answers_sampling_and_elicitation(mcp) -> None:
    hosted = mcp("connect people --sampling form --elicitation form")
    # A person answers: sampling and elicitation declared (beside the MCP Apps extension,
    # which the magics declare by default).
    assert set(hosted.session.client_capabilities) == {"sampling", "elicitation", "extensions"}
    inbox = hosted.view.children[-1]
    assert repr(inbox) == "Inbox: 0 waiting, 0 answered"

    call = mcp("call ask_llm prompt=<i>hi</i> --background")
    question = _wait_for_question(inbox)
    assert "&lt;i&gt;hi&lt;/i&gt;" in question.children[0].value
    question.reply.value = "typed by a person"
    send = question.children[-1].children[0]
    send.click()
    assert call.result(timeout=10).text == "typed by a person"

    call = mcp("call ask_user message=name? --background")
    question = _wait_for_question(inbox)
    question.form.fields[0].widget.value = "Grace"
    question.children[-1].children[0].click()  # Accept
    result = call.result(timeout=10)
    assert "accept" in result.text and "Grace" in result.text

    call = mcp("call ask_llm prompt=again --background")
    question = _wait_for_question(inbox)
    question.children[-1].children[1].click()  # Decline
    declined = call.result(timeout=10)
    assert declined.isError is True
    answer = hosted.session.transcript.filter(direction="send", kind="error")[-1].message
    assert answer["error"]["code"] == -1
    assert repr(inbox) == "Inbox: 0 waiting, 3 answered"


def test_callables_and_roots_from_the_notebook(mcp, tmp_path) -> None:
    mcp.shell.user_ns["my_model"] = lambda params: {
        "role": "assistant", "model": "py", "content": {"type": "text", "text": "from python"}}
    mcp(f"connect scripted --sampling my_model --roots {tmp_path}")
    assert mcp("call ask_llm prompt=x").text == "from python"
    assert tmp_path.as_uri() in mcp("call list_roots").text
    from mcp_nb.notebook.magics import McpCellError

    with pytest.raises(McpCellError, match="no callable named 'nothing_here'"):
        mcp(f"connect broken --sampling nothing_here -- {sys.executable} -m mcp_nb.lab")


def test_required_fields_are_marked_and_a_form_refuses_without_them(mcp) -> None:
    form = SchemaForm(SCHEMA)
    assert field(form, "name").widget.description == "name *"
    assert form.children[-1].value == "<small>* required</small>"
    with pytest.raises(ValueError, match="name: required, missing"):
        form.checked_value()
    field(form, "name").widget.value = "Ada"
    field(form, "extra").widget.value = "[1]"  # neither a string nor a number
    with pytest.raises(ValueError, match=r"extra: \[1\] is not valid"):
        form.checked_value()

    mcp("connect strictform")
    tool_form = mcp("form echo")
    tool_form.button.click()
    assert tool_form.status.value == "not sent: text: required, missing"
    hosted = __import__("mcp_nb.notebook").notebook.manager().session()
    assert not hosted.session.transcript.filter(method="tools/call")


def test_a_call_waiting_for_a_person_does_not_time_out_under_them(mcp) -> None:
    hosted = mcp("connect patient --elicitation form")
    inbox = hosted.view.children[-1]
    call = mcp("call ask_user message=name? --background --timeout 1")
    question = _wait_for_question(inbox)
    assert question.status.value.startswith("waiting for your answer")
    deadline = time.monotonic() + 10
    while not call.progress.held:
        assert time.monotonic() < deadline, "the progress widget never showed the hold"
        time.sleep(0.02)
    assert "timeout held: waiting for your answer to elicitation/create" in (
        call.progress.status.value)
    time.sleep(1.5)  # longer than the call's own timeout: held, so still waiting
    assert not call.done()
    question.form.fields[0].widget.value = "Grace"
    question.buttons[0].click()  # Accept
    assert "Grace" in call.result(timeout=10).text
    assert question.status.value == "sent"
    assert all(button.disabled for button in question.buttons)
    assert call.progress.outcome.startswith("done in ")
    question.buttons[1].click()  # a late click changes nothing
    assert question.status.value == "sent"


def test_a_question_the_server_no_longer_waits_for_expires(mcp) -> None:
    hosted = mcp("connect leaving --elicitation form")
    inbox = hosted.view.children[-1]
    mcp("call ask_user message=name? --background")
    question = _wait_for_question(inbox)
    hosted.close()  # the session ends under the question
    deadline = time.monotonic() + 10
    while not question.status.value.startswith("expired"):
        assert time.monotonic() < deadline, question.status.value
        time.sleep(0.02)
    assert all(button.disabled for button in question.buttons)
