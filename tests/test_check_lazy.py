"""The checkup's command line imports only what its path needs (issue 32).

No timings here (benchmarks/checkup_cli.py measures them): each test starts a fresh
interpreter and asserts which heavy modules an import left in ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Heavy imports no stdio checkup needs at start: the HTTP and authorization layers, the
#: notebook layer, and jsonschema (imported when the first schema is checked).
NOT_AT_START = ("httpx", "authlib", "joserfc", "jsonschema", "rfc3987_syntax", "lark",
                "IPython", "ipywidgets", "mcp_nb.notebook", "mcp_nb.transports.auto",
                "mcp_nb.check.http_rules")


def loaded_after(code: str, names: tuple[str, ...]) -> list[str]:
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps([n for n in {list(names)!r} if n in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_the_checkup_command_line_starts_without_the_http_notebook_and_schema_layers() -> None:
    assert loaded_after("import mcp_nb.check.__main__", NOT_AT_START) == []


def test_the_lab_over_stdio_starts_without_pydantic_or_http() -> None:
    assert loaded_after("import mcp_nb.lab.__main__",
                        ("pydantic", "httpx", "jsonschema", "IPython")) == []


def test_transports_package_names_still_resolve() -> None:
    import mcp_nb.transports as transports

    for name in transports.__all__:
        assert getattr(transports, name) is not None
    with pytest.raises(AttributeError):
        transports.NoSuchTransport  # noqa: B018


def test_a_schema_is_checked_without_building_the_iri_grammar_until_an_iri_is_checked() -> None:
    code = ("from mcp_nb.check.shapes import schema_problem\n"
            "assert schema_problem({'type': 'object', 'properties': {'a': {'type': 'string', "
            "'format': 'uri'}}}) is None\n"
            "assert schema_problem({'type': 'object', 'properties': 5}) is not None\n")
    assert loaded_after(code, ("jsonschema", "rfc3987_syntax", "lark")) == ["jsonschema"]
    # The iri formats are still checked, with the real module imported on first use.
    code += ("from mcp_nb.lazy_jsonschema import jsonschema\n"
             "checker = jsonschema().Draft202012Validator.FORMAT_CHECKER\n"
             "assert checker.conforms('http://example.com/ä', 'iri')\n"
             "assert not checker.conforms('not an iri', 'iri')\n"
             "import rfc3987_syntax\n"
             "assert hasattr(rfc3987_syntax, 'RFC3987_SYNTAX_TERMS')\n")
    pytest.importorskip("rfc3987_syntax")
    assert loaded_after(code, ("rfc3987_syntax", "lark")) == ["rfc3987_syntax", "lark"]
