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

from ..i18n import _
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
        return [_("{uri}: contents is not an array").format(uri=uri)], False
    problems = []
    for item in contents:
        if not isinstance(item, dict):
            problems.append(_("{uri}: a content is not an object").format(uri=uri))
            continue
        if not isinstance(item.get("uri"), str):
            problems.append(_("{uri}: a content has no string uri").format(uri=uri))
        if not isinstance(item.get("text"), str) and not isinstance(item.get("blob"), str):
            problems.append(_("{uri}: a content has neither text nor blob as a string").format(
                uri=uri))
        if "mimeType" in item and not isinstance(item["mimeType"], str):
            problems.append(_("{uri}: a content's mimeType is not a string").format(uri=uri))
    return problems, any(isinstance(i, dict) and i.get("uri") == uri for i in contents)


def message_problems(name: str, result: Any) -> list[str]:
    """What breaks GetPromptResult's messages (role user/assistant, a ContentBlock)."""
    messages = result.get("messages") if isinstance(result, dict) else None
    if not isinstance(messages, list):
        return [_("{name}: messages is not an array").format(name=repr(name))]
    problems = []
    for message in messages:
        if not isinstance(message, dict):
            problems.append(_("{name}: a message is not an object").format(name=repr(name)))
            continue
        if message.get("role") not in ("user", "assistant"):
            problems.append(_("{name}: role {role} is neither 'user' nor "
                            "'assistant'").format(name=repr(name), role=repr(message.get("role"))))
        content = message.get("content")
        if not isinstance(content, dict) or content.get("type") not in CONTENT_TYPES:
            kind = content.get("type") if isinstance(content, dict) else type(content).__name__
            problems.append(_("{name}: content of type {kind} is not a ContentBlock").format(
                name=repr(name), kind=repr(kind)))
    return problems


def argument_problems(prompt: dict[str, Any]) -> list[str]:
    """What breaks a listed Prompt's arguments (each a name, with typed required/description)."""
    name = prompt.get("name")
    arguments = prompt.get("arguments")
    if arguments is None:
        return []
    if not isinstance(arguments, list):
        return [_("{name}: arguments is not an array").format(name=repr(name))]
    problems = []
    for argument in arguments:
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            problems.append(_("{name}: an argument has no string name").format(name=repr(name)))
            continue
        for key, kind, label in (("required", bool, _("a boolean")),
                                 ("description", str, _("a string"))):
            if key in argument and not isinstance(argument[key], kind):
                problems.append(_("{name}: argument {argument}: {key} "
                                "{value} is not {label}").format(
                    name=repr(name), argument=repr(argument["name"]), key=key,
                    value=repr(argument[key]), label=label))
    return problems


def completion_problems(result: Any) -> list[str]:
    """What breaks CompleteResult's completion (at most 100 string values, typed total/hasMore)."""
    completion = result.get("completion") if isinstance(result, dict) else None
    if not isinstance(completion, dict):
        return [_("completion is not an object")]
    values = completion.get("values")
    problems = []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        problems.append(_("values is not an array of strings"))
    elif len(values) > 100:
        problems.append(_("{count} values: at most 100 are allowed").format(count=len(values)))
    if "total" in completion and not is_number(completion["total"]):
        problems.append(_("total {value} is not a number").format(
            value=repr(completion["total"])))
    if "hasMore" in completion and not isinstance(completion["hasMore"], bool):
        problems.append(_("hasMore {value} is not a boolean").format(
            value=repr(completion["hasMore"])))
    return problems


def conformance_problem(error: Any) -> str:
    """A jsonschema ValidationError in the kit's language for what a result most often breaks
    (a required property missing, a value of the wrong type), in jsonschema's own English
    words otherwise (it has no catalog).

    >>> from mcp_nb.lazy_jsonschema import jsonschema
    >>> schema = {"type": "object", "required": ["words"]}
    >>> conformance_problem(next(jsonschema().Draft202012Validator(schema).iter_errors({})))
    "'words' is a required property"
    """
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = next((n for n in error.validator_value if n not in error.instance), None)
        if missing is not None:
            return _("{name} is a required property").format(name=repr(missing))
    if error.validator == "type":
        types = error.validator_value if isinstance(error.validator_value, list) else [
            error.validator_value]
        return _("{value} is not of type {types}").format(
            value=repr(error.instance), types=", ".join(map(repr, types)))
    return str(error.message)


def schema_problem(schema: Any, *, object_type: bool = True) -> str | None:
    """Why ``schema`` is not a valid JSON Schema object schema (None if it is); with
    ``object_type=False`` only whether it is valid JSON Schema (a boolean schema is)."""
    if not object_type and isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return _("is {kind}, not a JSON object").format(kind=type(schema).__name__)
    if object_type and schema.get("type") != "object":
        return _("has type {kind}, not 'object'").format(kind=repr(schema.get("type")))
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        return _("has $schema {value}, not a URI string").format(value=repr(schema["$schema"]))
    schemas = jsonschema()
    try:
        schemas.validators.validator_for(
            schema, default=schemas.Draft202012Validator).check_schema(schema)
    except schemas.exceptions.SchemaError as exc:
        return _("is not valid JSON Schema: {error}").format(error=exc.message)
    except RecursionError:
        return _("is nested too deeply to be checked")
    return None


def object_type_problem(schema: Any) -> str | None:
    """Why a valid JSON Schema is not the schema's object schema (``type: "object"``)."""
    if not isinstance(schema, dict):
        return _("is the boolean schema {value}, not an object schema").format(value=repr(schema))
    if schema.get("type") != "object":
        return _("has type {kind}, not 'object'").format(kind=repr(schema.get("type")))
    return None
