"""Sans-I/O judgments of a result's shape: what a schema says a server's answer must look like.

Each function takes a value as the server sent it (already parsed JSON) and says
what breaks the 2025-11-25 schema's shape for it, one sentence per problem (none:
the shape holds).  No request is made here: the checks that make the requests
(:mod:`~mcp_nb.check.resources`, :mod:`~mcp_nb.check.prompts`,
:mod:`~mcp_nb.check.tools`, :mod:`~mcp_nb.check.tool_calls`) hand what came back
to these, which keeps every rule testable on a literal.

Example::

    >>> schema_problem({"type": "array", "items": {"type": "string"}})
    "has type 'array', not 'object'"
    >>> completion_problems({"completion": {"values": ["a", "b"], "total": True}})
    ['total True is not a number']
    >>> message_problems("greet", {"messages": [{"role": "system",
    ...                                          "content": {"type": "text", "text": "hi"}}]})
    ["'greet': role 'system' is neither 'user' nor 'assistant'"]
"""

from __future__ import annotations

from typing import Any

from ..lazy_jsonschema import jsonschema

#: ContentBlock types (schema 2025-11-25) a prompt message may carry.
CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")


def is_number(value: Any) -> bool:
    """A JSON number (a bool is an int to Python, never a number to JSON Schema)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def contents_problems(uri: str, result: Any) -> tuple[list[str], bool]:
    """What breaks ReadResourceResult's shape, and whether some content carries ``uri``."""
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        return [f"{uri}: contents is not an array"], False
    problems = []
    for item in contents:
        if not isinstance(item, dict):
            problems.append(f"{uri}: a content is not an object")
            continue
        if not isinstance(item.get("uri"), str):
            problems.append(f"{uri}: a content has no string uri")
        if not isinstance(item.get("text"), str) and not isinstance(item.get("blob"), str):
            problems.append(f"{uri}: a content has neither text nor blob as a string")
        if "mimeType" in item and not isinstance(item["mimeType"], str):
            problems.append(f"{uri}: a content's mimeType is not a string")
    return problems, any(isinstance(i, dict) and i.get("uri") == uri for i in contents)


def message_problems(name: str, result: Any) -> list[str]:
    """What breaks GetPromptResult's messages (role user/assistant, a ContentBlock)."""
    messages = result.get("messages") if isinstance(result, dict) else None
    if not isinstance(messages, list):
        return [f"{name!r}: messages is not an array"]
    problems = []
    for message in messages:
        if not isinstance(message, dict):
            problems.append(f"{name!r}: a message is not an object")
            continue
        if message.get("role") not in ("user", "assistant"):
            problems.append(f"{name!r}: role {message.get('role')!r} is neither 'user' nor "
                            "'assistant'")
        content = message.get("content")
        if not isinstance(content, dict) or content.get("type") not in CONTENT_TYPES:
            kind = content.get("type") if isinstance(content, dict) else type(content).__name__
            problems.append(f"{name!r}: content of type {kind!r} is not a ContentBlock")
    return problems


def argument_problems(prompt: dict[str, Any]) -> list[str]:
    """What breaks a listed Prompt's arguments (each a name, with typed required/description)."""
    name = prompt.get("name")
    arguments = prompt.get("arguments")
    if arguments is None:
        return []
    if not isinstance(arguments, list):
        return [f"{name!r}: arguments is not an array"]
    problems = []
    for argument in arguments:
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            problems.append(f"{name!r}: an argument has no string name")
            continue
        for key, kind, label in (("required", bool, "a boolean"),
                                 ("description", str, "a string")):
            if key in argument and not isinstance(argument[key], kind):
                problems.append(f"{name!r}: argument {argument['name']!r}: {key} "
                                f"{argument[key]!r} is not {label}")
    return problems


def completion_problems(result: Any) -> list[str]:
    """What breaks CompleteResult's completion (at most 100 string values, typed total/hasMore)."""
    completion = result.get("completion") if isinstance(result, dict) else None
    if not isinstance(completion, dict):
        return ["completion is not an object"]
    values = completion.get("values")
    problems = []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        problems.append("values is not an array of strings")
    elif len(values) > 100:
        problems.append(f"{len(values)} values: at most 100 are allowed")
    if "total" in completion and not is_number(completion["total"]):
        problems.append(f"total {completion['total']!r} is not a number")
    if "hasMore" in completion and not isinstance(completion["hasMore"], bool):
        problems.append(f"hasMore {completion['hasMore']!r} is not a boolean")
    return problems


def schema_problem(schema: Any, *, object_type: bool = True) -> str | None:
    """Why ``schema`` is not a valid JSON Schema object schema (None if it is); with
    ``object_type=False`` only whether it is valid JSON Schema (a boolean schema is)."""
    if not object_type and isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return f"is {type(schema).__name__}, not a JSON object"
    if object_type and schema.get("type") != "object":
        return f"has type {schema.get('type')!r}, not 'object'"
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        return f"has $schema {schema['$schema']!r}, not a URI string"
    schemas = jsonschema()
    try:
        schemas.validators.validator_for(
            schema, default=schemas.Draft202012Validator).check_schema(schema)
    except schemas.exceptions.SchemaError as exc:
        return f"is not valid JSON Schema: {exc.message}"
    except RecursionError:
        return "is nested too deeply to be checked"
    return None


def object_type_problem(schema: Any) -> str | None:
    """Why a valid JSON Schema is not the schema's object schema (``type: "object"``)."""
    if not isinstance(schema, dict):
        return f"is the boolean schema {schema!r}, not an object schema"
    if schema.get("type") != "object":
        return f"has type {schema.get('type')!r}, not 'object'"
    return None
