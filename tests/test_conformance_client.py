"""The conformance client and the suite driver on their own: contract, dispatch, verdicts."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_nb.conformance import Assignment, load_players, player_for
from mcp_nb.conformance.scenarios import (
    SkillRejected,
    accept_with_defaults,
    sample_arguments,
    skill_frontmatter,
    verify_skill_file,
)
from mcp_nb.conformance.suite import (
    SUITE_VERSIONS,
    ListedScenario,
    Outcome,
    Suite,
    parse_listing,
)

ROOT = Path(__file__).resolve().parent.parent


def test_assignment_reads_the_suite_environment() -> None:
    environ = {
        "MCP_CONFORMANCE_SCENARIO": "http-custom-headers",
        "MCP_CONFORMANCE_PROTOCOL_VERSION": "2026-07-28",
        "MCP_CONFORMANCE_CONTEXT": json.dumps({"name": "http-custom-headers",
                                               "toolCalls": [{"name": "t"}]}),
    }
    assignment = Assignment.from_environment("http://127.0.0.1:1/mcp", environ)
    assert assignment.scenario == "http-custom-headers"
    assert assignment.protocol_version == "2026-07-28"
    assert assignment.context["toolCalls"] == [{"name": "t"}]
    assert assignment.server_url == "http://127.0.0.1:1/mcp"


def test_assignment_without_a_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="MCP_CONFORMANCE_SCENARIO"):
        Assignment.from_environment("http://127.0.0.1:1/mcp", {})


def test_every_core_scenario_has_a_player() -> None:
    players = load_players()
    for name in ("initialize", "tools_call", "sse-retry", "request-metadata",
                 "elicitation-sep1034-client-defaults", "sep-2322-client-request-state",
                 "http-custom-headers", "sep-2640-client-verify-digest"):
        assert name in players
    with pytest.raises(LookupError, match="no client for conformance scenario"):
        player_for("no-such-scenario")


def test_unknown_scenario_exits_2_and_says_why() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_nb.conformance", "http://127.0.0.1:9/mcp"],
        env={"MCP_CONFORMANCE_SCENARIO": "no-such-scenario", "PATH": ""},
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "no client for conformance scenario 'no-such-scenario'" in done.stderr


def test_sample_arguments_fill_required_parameters_only() -> None:
    schema = {"type": "object", "required": ["a", "mode", "n", "flag"],
              "properties": {"a": {"type": "number"}, "mode": {"enum": ["x", "y"]},
                             "n": {"type": "integer", "default": 7},
                             "flag": {"type": "boolean"}, "extra": {"type": "string"}}}
    assert sample_arguments(schema) == {"a": 2.5, "mode": "x", "n": 7, "flag": True}


def test_elicitation_is_accepted_with_the_form_defaults() -> None:
    answer = accept_with_defaults({"requestedSchema": {"properties": {
        "name": {"type": "string", "default": "Ada"}, "note": {"type": "string"}}}})
    assert answer == {"action": "accept", "content": {"name": "Ada"}}


def test_skill_files_are_checked_for_size_and_digest() -> None:
    data = b"---\nname: s\n---\nbody\n"
    listed = {"digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
    verify_skill_file("skill://s/SKILL.md", data, listed)
    with pytest.raises(SkillRejected, match="bytes read"):
        verify_skill_file("skill://s/SKILL.md", data + b"x", listed)
    with pytest.raises(SkillRejected, match="does not match"):
        verify_skill_file("skill://s/SKILL.md", data.replace(b"body", b"evil"), listed)


def test_skill_frontmatter_is_parsed_as_yaml() -> None:
    assert skill_frontmatter("---\nname: pdf\ndescription: 'Fill: forms'\n---\nbody") == {
        "name": "pdf", "description": "Fill: forms"}
    with pytest.raises(SkillRejected, match="not valid YAML"):
        skill_frontmatter("---\nname: pdf\ndescription: Fill: forms\n---\nbody")
    with pytest.raises(SkillRejected, match="never closed"):
        skill_frontmatter("---\nname: pdf\n")


def test_the_suite_listing_is_parsed_by_section() -> None:
    listing = ("Server scenarios (test against a server):\n"
               "  - ping [2025-06-18,2025-11-25]\n"
               "\nClient scenarios (test against a client):\n"
               "  - \x1b[1mtools_call\x1b[0m [2025-06-18,2025-11-25,2026-07-28]\n"
               "  - auth/dpop [extension]\n"
               "\nAuthorization server scenarios (test against an authorization server):\n"
               "  - authorization-code-grant [2025-03-26]\n")
    listed = parse_listing(listing)
    assert [(s.role, s.name, s.tags) for s in listed] == [
        ("server", "ping", ("2025-06-18", "2025-11-25")),
        ("client", "tools_call", ("2025-06-18", "2025-11-25", "2026-07-28")),
        ("client", "auth/dpop", ("extension",)),
        ("authorization-server", "authorization-code-grant", ("2025-03-26",)),
    ]
    assert listed[2].is_auth and not listed[1].is_auth


def test_each_tagged_revision_is_a_wire_version_where_the_suite_can_choose(tmp_path) -> None:
    tools_call = ListedScenario("client", "tools_call", ("2025-06-18", "2026-07-28"))
    extension = ListedScenario("client", "sep-2640-client-no-prefetch", ("extension",))
    assert Suite("0.2.0-alpha.12", tmp_path).wire_versions(tools_call) == (
        "2025-06-18", "2026-07-28")
    assert Suite("0.2.0-alpha.12", tmp_path).wire_versions(extension) == ("default",)
    assert Suite("0.1.16", tmp_path).wire_versions(tools_call) == ("default",)


@pytest.mark.parametrize(("exit_code", "statuses", "ok"), [
    (0, ["SUCCESS", "INFO"], True),
    (0, ["SUCCESS", "WARNING"], False),
    (1, ["SUCCESS"], False),
    (0, ["SUCCESS", "FAILURE"], False),
    (0, [], False),
])
def test_a_run_passes_only_on_a_clean_verdict(exit_code: int, statuses: list[str],
                                              ok: bool) -> None:
    outcome = Outcome("0.2.0-alpha.12", "client", "x", "default", exit_code, "",
                      [{"status": status} for status in statuses])
    assert outcome.ok is ok


def test_a_run_whose_checks_were_all_skipped_judged_nothing() -> None:
    skipped = Outcome("0.2.0-alpha.12", "server", "x", "default", 0, "",
                      [{"status": "SKIPPED", "errorMessage": "harness pending"}])
    assert skipped.ok and not skipped.judged
    assert skipped.skip_reasons() == ["harness pending"]
    warned = Outcome("0.2.0-alpha.12", "server", "x", "default", 0, "", [{"status": "WARNING"}])
    assert warned.judged and not warned.ok


def test_the_report_is_in_the_docs_toctree() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "\nconformance\n" in index
    report = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    for version in SUITE_VERSIONS:
        assert f"## {version}: Client scenarios" in report
        assert f"## {version}: Server scenarios" in report
