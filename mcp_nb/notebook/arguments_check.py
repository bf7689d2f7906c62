"""Tool arguments checked against the tool's ``inputSchema`` before they are sent.

Uses :mod:`jsonschema` (the validator the official Python SDK uses), so a
mistake is named on the client's side, field by field, instead of coming back
as whatever the server makes of it::

    >>> for problem in problems({"type": "object", "required": ["a", "b"],
    ...                          "properties": {"a": {"type": "number"},
    ...                                         "b": {"type": "number"}}},
    ...                         {"a": "three"}):
    ...     print(problem)
    a: 'three' is not of type 'number'
    b: required, missing

A schema that is itself broken is the server's problem, not the caller's: it
is reported once and the arguments are not judged against it.
"""

from __future__ import annotations

import re
from typing import Any

from ..i18n import _
from ..lazy_jsonschema import jsonschema


def problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """One line per problem, each naming its field (``a.b[0]``) and why; empty when valid."""
    return SchemaCheck(schema).problems(arguments)


class SchemaCheck:
    """One ``inputSchema``, checked and compiled once, against which arguments are judged.

    Checking the schema itself against its meta-schema costs far more than
    judging a call's arguments, so ``%mcp call`` keeps one of these per tool (see
    :meth:`mcp_nb.notebook.hosted.HostedSession.arguments_check`) for as long as
    the server's tool list stands.
    """

    def __init__(self, schema: Any) -> None:
        self._validator: Any = None
        #: Why the schema itself is not valid JSON Schema (then nothing is judged), or None.
        self._broken: str | None = None
        if not isinstance(schema, dict):
            return
        schemas = jsonschema()
        validator_class = schemas.validators.validator_for(schema)
        try:
            validator_class.check_schema(schema)
        except schemas.exceptions.SchemaError as exc:
            self._broken = exc.message
            return
        self._validator = validator_class(schema)

    def problems(self, arguments: dict[str, Any]) -> list[str]:
        """One line per problem, each naming its field (``a.b[0]``) and why; empty when valid."""
        if self._broken is not None:
            return [_("(the tool's inputSchema is not a valid JSON Schema, so nothing was "
                      "checked: {reason})").format(reason=self._broken)]
        if self._validator is None:
            return []
        found = []
        for error in self._validator.iter_errors(arguments):
            if error.validator == "required":
                # jsonschema words it "'b' is a required property", at the parent's path.
                missing = [name for name in error.validator_value
                           if isinstance(error.instance, dict) and name not in error.instance]
                found += [_("{name}: required, missing").format(
                    name=_field([*error.absolute_path, name])) for name in missing]
                continue
            if error.validator == "additionalProperties" and isinstance(error.instance, dict):
                declared = error.schema.get("properties") or {}
                patterns = list(error.schema.get("patternProperties") or {})
                found += [_("{name}: not a parameter of this tool").format(
                    name=_field([*error.absolute_path, name]))
                          for name in error.instance if name not in declared
                          and not any(re.search(pattern, name) for pattern in patterns)]
                continue
            # jsonschema's own words stay English (it has no catalog).
            found.append(f"{_field(error.absolute_path) or _('(arguments)')}: {error.message}")
        return sorted(found)


def _field(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
