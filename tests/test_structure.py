"""The package keeps the shape its architecture sets (docs/architecture.md, CONTRIBUTING.md).

Measured from the source, so a rule broken by a change fails here with the offender named:
no module over 600 lines, no class over 400, no import circle that runs when the code runs
(an import under ``if TYPE_CHECKING:`` is for the type checker only and does not count), and
no client part reaching into the session façade's private members.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mcp_nb"
MODULE_LINES = 600
CLASS_LINES = 400


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(module: str, path: Path) -> set[str]:
    """The package's modules that ``module`` imports when it runs: at its top level and
    inside functions (a lazy import still closes a circle when that function runs), but not
    under ``if TYPE_CHECKING:``."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()

    def resolve(node: ast.ImportFrom) -> str:
        if node.level == 0:
            return node.module or ""
        base = module.split(".")
        base = base if is_package else base[:-1]
        base = base[:len(base) - (node.level - 1)]
        return ".".join([*base, node.module] if node.module else base)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            origin = resolve(node)
            targets.add(origin)
            # "from package import module" imports that module too.
            targets.update(f"{origin}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {target for target in targets if target in MODULES and target != module}


def _circles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted.

    A package's ``__init__`` re-exporting its own modules is not counted as an arrow back:
    importing ``a.b`` runs ``a/__init__`` first by Python's rules, which no code can avoid.
    """
    graph = {module: {target for target in _runtime_imports(module, path)
                      if not module.startswith(f"{target}.")
                      and not target.startswith(f"{module}.")}
             for module, path in MODULES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in graph:
        if node not in index:
            connect(node)
    return found


def test_no_module_is_longer_than_600_lines() -> None:
    long = {str(path.relative_to(ROOT)): lines for path in MODULES.values()
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES}
    assert long == {}, "split these by meaning (CONTRIBUTING.md, 'Rooms')"


def test_no_class_is_longer_than_400_lines() -> None:
    long = {}
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > CLASS_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert long == {}


def test_no_import_circle_runs_at_run_time() -> None:
    assert _circles() == []


def test_the_circle_finder_finds_a_circle_and_ignores_type_only_imports(monkeypatch) -> None:
    # The rule above must be able to fail: a lazy import back closes a circle, one under
    # TYPE_CHECKING does not.
    def imports(module: str, _path: Path) -> set[str]:
        return {"mcp_nb.a": {"mcp_nb.b"}, "mcp_nb.b": {"mcp_nb.a"}}.get(module, set())

    monkeypatch.setattr(__import__(__name__), "_runtime_imports", imports)
    monkeypatch.setitem(MODULES, "mcp_nb.a", PACKAGE / "a.py")
    monkeypatch.setitem(MODULES, "mcp_nb.b", PACKAGE / "b.py")
    assert _circles() == [["mcp_nb.a", "mcp_nb.b"]]


def test_type_only_and_lazy_imports_are_told_apart(tmp_path) -> None:
    source = tmp_path / "sample.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from mcp_nb.client import session\n"
                      "def later():\n    from mcp_nb.protocol import errors\n")
    found = _runtime_imports("mcp_nb.sample", source)
    assert "mcp_nb.protocol.errors" in found
    assert "mcp_nb.client.session" not in found


PRIVATE_REACH = re.compile(r"\bsession\._[a-z]")


def test_client_parts_use_the_sessions_declared_seams() -> None:
    # The façade hands its parts what they need (client/parts.py); nothing outside it
    # reaches into its private members.
    reaching = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                for path in MODULES.values() if path != PACKAGE / "client" / "session.py"
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if PRIVATE_REACH.search(line)]
    assert reaching == []


def test_the_inner_loops_slow_lists_name_tests_that_exist() -> None:
    # tests/conftest.py leaves these out of `-m "not slow"`; a renamed test would silently
    # join the inner loop, and a stale name would be dead configuration.
    from conftest import SLOW_MODULES, SLOW_TESTS

    tests = ROOT / "tests"
    assert [name for name in SLOW_MODULES if not (tests / name).exists()] == []
    missing = [f"{module}::{name}" for module, names in SLOW_TESTS.items()
               for name in names if f"def {name}(" not in (tests / module).read_text()]
    assert missing == []
