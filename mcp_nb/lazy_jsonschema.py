"""jsonschema, imported when a schema is first checked, without its slowest import.

``import jsonschema`` imports every optional format checker it finds installed, and one
of them, ``rfc3987_syntax`` (the ``iri`` and ``iri-reference`` formats), builds a lark
grammar when it is imported: about a second on a small machine, more than the rest of a
checkup's imports together.  :func:`jsonschema` imports jsonschema the first time it is
called, with ``rfc3987_syntax`` standing in by a placeholder whose ``is_valid_syntax``
imports the real module on its first call: jsonschema registers the same format checkers
as ever, and the grammar is built only when an ``iri`` format is actually checked (the
metaschemas that ``check_schema`` validates a schema against use none).

Example::

    >>> from mcp_nb.lazy_jsonschema import jsonschema
    >>> jsonschema().Draft202012Validator({"type": "string"}).is_valid("a")
    True
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

_DEFERRED = "rfc3987_syntax"


def _is_valid_syntax(*args: Any, **kwargs: Any) -> Any:
    """rfc3987_syntax's ``is_valid_syntax``, imported on its first call."""
    placeholder = sys.modules.get(_DEFERRED)
    if getattr(placeholder, "__mcp_nb_placeholder__", False):
        del sys.modules[_DEFERRED]
    return importlib.import_module(_DEFERRED).is_valid_syntax(*args, **kwargs)


def _import_deferring_rfc3987() -> types.ModuleType:
    if _DEFERRED in sys.modules or importlib.util.find_spec(_DEFERRED) is None:
        return importlib.import_module("jsonschema")
    placeholder = types.ModuleType(_DEFERRED, "imported on first use by mcp_nb")
    placeholder.__mcp_nb_placeholder__ = True  # type: ignore[attr-defined]
    placeholder.is_valid_syntax = _is_valid_syntax  # type: ignore[attr-defined]
    sys.modules[_DEFERRED] = placeholder
    try:
        return importlib.import_module("jsonschema")
    finally:
        # Anyone else importing rfc3987_syntax from now on gets the real module.
        if sys.modules.get(_DEFERRED) is placeholder:
            del sys.modules[_DEFERRED]


def jsonschema() -> types.ModuleType:
    """The jsonschema package (with ``validators`` and ``exceptions``), imported once."""
    module = sys.modules.get("jsonschema")
    if module is None or not hasattr(module, "validators"):
        module = _import_deferring_rfc3987()
    return module
