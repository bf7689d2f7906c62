"""What the lab server offers: tools, resources, templates, prompts, as plain data.

Keeping the catalogue apart from the protocol engine makes two things easy: the
``--hostile-strings`` knob can dress every display string in one place, and a
reader can see the whole menu on one screen.  Handlers live in :mod:`.server`;
a :class:`ToolSpec` names the handler it runs, so several tools may share one.

With ``--list-changes`` the menu also has a ``toggle_bonus`` tool and a bonus
tool, prompt and resource that come and go with it (:class:`Bonus`), so that
``list_changed`` notifications have something to announce.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Markup, template syntax, a newline, ANSI colour, a bell and a right-to-left
#: override: everything a careless client might render, interpret or garble.
HOSTILE = (
    '<script>alert(1)</script> <img src=x onerror=alert(1)> "quotes" & ampersands '
    "</svg> {{ braces }}\nsecond line \x1b[31mANSI red\x1b[0m \x07bell "
    "\u202edesrever\u202c"
)

#: A tool whose *name* is hostile, offered only with ``--hostile-strings``; it echoes.
HOSTILE_TOOL_NAME = "echo<script>alert(1)</script>\u202e"

HELLO_URI = "lab://static/hello.txt"
HELLO_TEXT = "Hello from the mcp_nb lab server.\n"
COUNTER_URI = "lab://counter"
ECHO_TEMPLATE = "lab://echo/{text}"
#: Fixed prefix of URIs matching :data:`ECHO_TEMPLATE`.
ECHO_PREFIX = "lab://echo/"

GREET = "greet"
GREET_STYLES = ("formal", "casual")

BONUS = "bonus"
BONUS_URI = "lab://bonus"
BONUS_TEXT = "You found the bonus."

INSTRUCTIONS = (
    "A teaching server. Try the echo and add tools, read lab://static/hello.txt, "
    "subscribe to lab://counter and call bump, or get the greet prompt. "
    "ask_llm, ask_user and list_roots call back into the client."
)


@dataclass(frozen=True)
class ToolSpec:
    """One tool as listed by ``tools/list``, plus the server handler that runs it."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    handler: str
    output_schema: dict[str, Any] | None = None
    #: The request the tool makes of the client (``sampling/createMessage`` …), if any.
    asks: str | None = None

    def listing(self) -> dict[str, Any]:
        """The ``Tool`` object sent in ``tools/list``."""
        tool = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        return tool


@dataclass(frozen=True)
class Bonus:
    """What ``toggle_bonus`` adds to (and removes from) the three lists."""

    tool: ToolSpec
    prompt: dict[str, Any]
    resource: dict[str, Any]


@dataclass(frozen=True)
class Catalogue:
    """Everything a client can list, with display strings already (maybe) dressed."""

    server_name: str
    server_title: str
    instructions: str
    tools: dict[str, ToolSpec]
    resources: tuple[dict[str, Any], ...]
    templates: tuple[dict[str, Any], ...]
    prompts: tuple[dict[str, Any], ...]
    #: Extra tool output appended to every tool result (empty when well behaved).
    tool_output_extra: str
    bonus: Bonus


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def build_catalogue(hostile: bool = False, list_changes: bool = False) -> Catalogue:
    """The server's menu; with ``hostile`` every display string carries :data:`HOSTILE`.

    ``list_changes`` adds the ``toggle_bonus`` tool (``--list-changes``).
    """

    def dress(text: str) -> str:
        return f"{text} {HOSTILE}" if hostile else text

    text_arg = {"type": "string", "description": "Text to echo back."}
    tools = [
        ToolSpec(
            "echo",
            dress("Echo"),
            dress("Returns the given text unchanged."),
            _schema({"text": text_arg}, ("text",)),
            "echo",
        ),
        ToolSpec(
            "add",
            dress("Add"),
            dress("Adds two numbers; also returns structured output."),
            _schema({"a": {"type": "number"}, "b": {"type": "number"}}, ("a", "b")),
            "add",
            output_schema=_schema({"sum": {"type": "number"}}, ("sum",)),
        ),
        ToolSpec(
            "slow",
            dress("Slow"),
            dress("Counts steps with a pause between them, reporting progress; cancellable."),
            _schema(
                {
                    "steps": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 5},
                    "interval": {"type": "number", "minimum": 0, "maximum": 10, "default": 0.2},
                }
            ),
            "slow",
        ),
        ToolSpec(
            "ask_llm",
            dress("Ask the client's LLM"),
            dress("Sends the prompt to the client via sampling/createMessage."),
            _schema({"prompt": {"type": "string"}}, ("prompt",)),
            "ask_llm",
            asks="sampling/createMessage",
        ),
        ToolSpec(
            "ask_user",
            dress("Ask the user"),
            dress("Asks the user a question via elicitation/create."),
            _schema({"message": {"type": "string"}}, ("message",)),
            "ask_user",
            asks="elicitation/create",
        ),
        ToolSpec(
            "list_roots",
            dress("List roots"),
            dress("Asks the client for its roots via roots/list."),
            _schema({}),
            "list_roots",
            asks="roots/list",
        ),
        ToolSpec(
            "bump",
            dress("Bump the counter"),
            dress("Increments lab://counter and notifies its subscribers."),
            _schema({}),
            "bump",
        ),
    ]
    if list_changes:
        tools.append(
            ToolSpec(
                "toggle_bonus",
                dress("Toggle the bonus"),
                dress("Adds or removes the bonus tool, prompt and resource, and announces "
                      "each list change."),
                _schema({}),
                "toggle_bonus",
            )
        )
    if hostile:
        tools.append(
            ToolSpec(
                HOSTILE_TOOL_NAME,
                dress("Hostile echo"),
                dress("Echoes, under a name full of markup."),
                _schema({"text": text_arg}, ("text",)),
                "echo",
            )
        )
    resources = (
        {
            "uri": HELLO_URI,
            "name": dress("hello.txt"),
            "title": dress("Hello"),
            "description": dress("A fixed greeting."),
            "mimeType": "text/plain",
        },
        {
            "uri": COUNTER_URI,
            "name": dress("counter"),
            "title": dress("Counter"),
            "description": dress("How often bump was called; subscribe to hear about changes."),
            "mimeType": "text/plain",
        },
    )
    templates = (
        {
            "uriTemplate": ECHO_TEMPLATE,
            "name": dress("echo"),
            "title": dress("Echo resource"),
            "description": dress("Reading lab://echo/<text> returns <text>, percent-decoded."),
            "mimeType": "text/plain",
        },
    )
    prompts = (
        {
            "name": GREET,
            "title": dress("Greet someone"),
            "description": dress("Asks the model for a greeting in a given style."),
            "arguments": [
                {"name": "name", "description": dress("Who to greet."), "required": True},
                {
                    "name": "style",
                    "description": dress("formal or casual (default casual)."),
                    "required": False,
                },
            ],
        },
    )
    bonus = Bonus(
        tool=ToolSpec(BONUS, dress("Bonus"), dress("Present while the bonus is on."),
                      _schema({}), BONUS),
        prompt={"name": BONUS, "title": dress("Bonus"),
                "description": dress("Present while the bonus is on.")},
        resource={"uri": BONUS_URI, "name": dress("bonus"), "title": dress("Bonus"),
                  "description": dress("Present while the bonus is on."),
                  "mimeType": "text/plain"},
    )
    return Catalogue(
        server_name=dress("mcp_nb-lab"),
        server_title=dress("mcp_nb lab server"),
        instructions=dress(INSTRUCTIONS),
        tools={tool.name: tool for tool in tools},
        resources=resources,
        templates=templates,
        prompts=prompts,
        tool_output_extra=HOSTILE if hostile else "",
        bonus=bonus,
    )
