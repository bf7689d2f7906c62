"""The client side of each non-authorization conformance scenario, on mcp_nb's public API.

Each player does what its scenario expects of a client and nothing more; the suite's
mock server judges how mcp_nb's session and transports carry it out. The wire version
the suite asks for picks the era: a stateless version (2026-07-28) connects without a
handshake, any other is offered in ``initialize``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .. import __version__
from ..client import ClientSession
from ..protocol.versions import STATELESS_VERSIONS
from ..transports import http_transport
from .registry import Assignment, plays

CLIENT_INFO = {"name": "mcp_nb-conformance", "version": __version__}
#: Long enough for the suite's slowest mock (sse-retry waits out a retry interval), short
#: enough that a stuck request fails with its own message before the suite's 30 s kill.
REQUEST_TIMEOUT = 20.0

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


@contextlib.asynccontextmanager
async def connected(assignment: Assignment, *,
                    transport_options: Mapping[str, Any] | None = None,
                    **session_options: Any) -> AsyncIterator[ClientSession]:
    """A session to the scenario's server, made the way ``%mcp connect URL`` makes one.

    The referee must judge the path users take, so the transport is
    :func:`~mcp_nb.transports.http_transport`'s default (``"auto"``: Streamable
    HTTP, legacy SSE if refused), and the era is settled as a user settles it: no
    version asked for, or a stateless one, is ``era="auto"`` (probe with
    ``server/discover``, fall back to the handshake); a handshake version is
    offered in ``initialize``, the magics' default era.  ``transport_options`` go
    to ``http_transport`` (headers, authorization), ``session_options`` to
    :class:`~mcp_nb.client.ClientSession`.
    """
    transport = http_transport(assignment.server_url, **dict(transport_options or {}))
    version = assignment.protocol_version
    async with ClientSession(transport, client_info=CLIENT_INFO, timeout=REQUEST_TIMEOUT,
                             **session_options) as session:
        if version is None or version in STATELESS_VERSIONS:
            await session.connect(version, era="auto")
        else:
            await session.connect(version)
        # The suite keeps the client's stderr with the results: the report reads the
        # wire version actually spoken from this line.
        print(f"mcp_nb.conformance: speaking {session.negotiated_version} ({session.era} era)",
              file=sys.stderr, flush=True)
        yield session


def sample_arguments(input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments a caller would fill in for a tool's required parameters.

    A parameter's ``default`` or first ``enum`` value when it has one, else a
    plain value of its type.
    """
    properties = input_schema.get("properties") or {}
    plain = {"string": "sample", "integer": 1, "number": 2.5, "boolean": True,
             "array": [], "object": {}}
    arguments: dict[str, Any] = {}
    for name in input_schema.get("required") or []:
        spec = properties.get(name) or {}
        if "default" in spec:
            arguments[name] = spec["default"]
        elif spec.get("enum"):
            arguments[name] = spec["enum"][0]
        else:
            kind = spec.get("type", "string")
            arguments[name] = plain.get(kind if isinstance(kind, str) else kind[0], "sample")
    return arguments


@plays("initialize")
async def connect_only(assignment: Assignment) -> None:
    """Connect and close: the handshake (and the shutdown) is all the scenario looks at.

    Its server declares no capabilities, so a client may send it nothing else.
    """
    async with connected(assignment):
        pass


@plays("tools_call", "sse-retry", "http-invalid-tool-headers")
async def call_every_tool(assignment: Assignment) -> None:
    """Connect, list the tools, call each one the client kept with sample arguments.

    ``http-invalid-tool-headers`` judges which tools the list keeps (the client must
    drop those whose ``x-mcp-header`` is invalid, so they are never called);
    ``sse-retry`` answers the call on a resumed stream.
    """
    async with connected(assignment) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool.name, sample_arguments(tool.inputSchema))


@plays("request-metadata", "json-schema-ref-no-deref")
async def list_tools_only(assignment: Assignment) -> None:
    """Connect and list the tools if the server offers any: the suite judges the requests.

    ``request-metadata`` looks at every request's ``_meta`` and header and at the retry
    after a refused version (its server declares no capabilities, so ``server/discover``
    is all a client may send it); ``json-schema-ref-no-deref`` at what is not fetched.
    """
    async with connected(assignment) as session:
        if session.capabilities.server_supports("tools/list"):
            await session.list_tools()


@plays("json-schema-2020-12-preservation")
async def echo_tool_schema(assignment: Assignment) -> None:
    """Send the focal tool's input schema back through the echo tool, exactly as listed."""
    async with connected(assignment) as session:
        tools = {tool.name: tool for tool in await session.list_tools()}
        focal = tools.get("json_schema_2020_12_tool")
        if focal is None:
            raise LookupError(f"the server lists no json_schema_2020_12_tool ({sorted(tools)})")
        await session.call_tool("json_schema_echo", {"schema": focal.inputSchema})


@plays("http-standard-headers")
async def use_every_primitive(assignment: Assignment) -> None:
    """Call each tool, read each resource, get each prompt: one request of every named kind."""
    async with connected(assignment) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool.name, sample_arguments(tool.inputSchema))
        for resource in await session.list_resources():
            await session.read_resource(resource.uri)
        for prompt in await session.list_prompts():
            await session.get_prompt(prompt.name)


@plays("http-custom-headers")
async def call_tools_from_context(assignment: Assignment) -> None:
    """List the tools (their ``x-mcp-header`` annotations), then make the calls the suite names."""
    async with connected(assignment) as session:
        await session.list_tools()
        for call in assignment.context.get("toolCalls", []):
            await session.call_tool(call["name"], call.get("arguments") or {})


def accept_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """A user who accepts an elicitation form as it was pre-filled with the schema's defaults."""
    properties = (params.get("requestedSchema") or {}).get("properties") or {}
    content = {name: spec["default"] for name, spec in properties.items() if "default" in spec}
    return {"action": "accept", "content": content}


@plays("elicitation-sep1034-client-defaults")
async def accept_elicitation_defaults(assignment: Assignment) -> None:
    """Call the tool that elicits; answer with the form's defaults."""
    async with connected(assignment, on_elicitation=accept_with_defaults) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool.name, sample_arguments(tool.inputSchema))


@plays("sep-2322-client-request-state")
async def answer_input_requests(assignment: Assignment) -> None:
    """Complete each multi-round-trip tool call, with an unrelated call in the middle of one.

    The first elicitation is answered only after another tool call has completed, so
    the server sees whether one request's ``requestState`` or ``inputResponses``
    leak into another.
    """
    session: ClientSession | None = None
    interleaved = False

    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal interleaved
        if not interleaved and session is not None:
            interleaved = True
            await session.call_tool("test_mrtr_unrelated", {})
        return {"action": "accept", "content": {"confirmed": True}}

    async with connected(assignment, on_elicitation=confirm) as opened:
        session = opened
        names = [tool.name for tool in await opened.list_tools()]
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
            if name not in names:
                raise LookupError(f"the server lists no {name} ({names})")
            await opened.call_tool(name, {})


class SkillRejected(Exception):
    """A skill file failed verification against its entry in ``skills/list``."""


def _content_bytes(contents: list[dict[str, Any]], uri: str) -> bytes:
    for block in contents:
        if block.get("uri", uri) != uri:
            continue
        if "text" in block:
            return str(block["text"]).encode("utf-8")
        if "blob" in block:
            return base64.b64decode(block["blob"])
    raise SkillRejected(f"resources/read {uri} returned no content for that URI")


def verify_skill_file(uri: str, data: bytes, listed: Mapping[str, Any]) -> None:
    """Check a fetched file against its ``skills/list`` entry: byte size, then digest."""
    if "size" in listed and len(data) != listed["size"]:
        raise SkillRejected(f"{uri}: {len(data)} bytes read, the skill entry says "
                            f"{listed['size']}: refusing the skill")
    algorithm, _, expected = str(listed.get("digest", "")).partition(":")
    if not expected:
        raise SkillRejected(f"{uri}: the skill entry carries no digest to verify against")
    try:
        actual = hashlib.new(algorithm, data).hexdigest()
    except ValueError:
        raise SkillRejected(f"{uri}: unknown digest algorithm {algorithm!r}") from None
    if actual != expected.lower():
        raise SkillRejected(f"{uri}: {algorithm} digest {actual} does not match the skill "
                            f"entry's {expected}: refusing the skill")


def skill_frontmatter(text: str) -> dict[str, Any]:
    """The YAML frontmatter of a SKILL.md (between the opening ``---`` lines)."""
    import yaml  # PyYAML: a test dependency, needed only by the skills scenarios

    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillRejected("SKILL.md does not open with a --- frontmatter block")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise SkillRejected("SKILL.md's frontmatter block is never closed") from None
    try:
        parsed = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise SkillRejected(f"SKILL.md's frontmatter is not valid YAML ({exc})") from None
    if not isinstance(parsed, dict):
        raise SkillRejected("SKILL.md's frontmatter is not a mapping")
    return parsed


async def load_skill(session: ClientSession, entry: Mapping[str, Any]) -> dict[str, bytes]:
    """Fetch a skill's SKILL.md, verify it, then fetch and verify its other files."""
    files = {item["uri"]: item for item in entry.get("resources") or []}
    main_uri = entry["uri"]
    if main_uri not in files:
        raise SkillRejected(f"{main_uri}: the skill entry lists no digest for its SKILL.md")
    loaded: dict[str, bytes] = {}
    main = _content_bytes(await session.read_resource(main_uri), main_uri)
    verify_skill_file(main_uri, main, files[main_uri])
    found = skill_frontmatter(main.decode("utf-8"))
    if found != dict(entry.get("frontmatter") or {}):
        raise SkillRejected(f"{main_uri}: frontmatter {found} differs from the skill entry's "
                            f"{entry.get('frontmatter')}: refusing the skill")
    loaded[main_uri] = main
    for uri, listed in files.items():
        if uri != main_uri:
            data = _content_bytes(await session.read_resource(uri), uri)
            verify_skill_file(uri, data, listed)
            loaded[uri] = data
    return loaded


def _skills_capabilities() -> dict[str, Any]:
    return {"extensions": {SKILLS_EXTENSION: {}}}


@plays("sep-2640-client-no-prefetch")
async def list_skills(assignment: Assignment) -> None:
    """List the skills and load none: no file may be fetched before a skill is needed."""
    async with connected(assignment, capabilities=_skills_capabilities()) as session:
        await session.request("skills/list")


@plays("sep-2640-client-verify-digest", "sep-2640-client-verify-size",
       "sep-2640-client-verify-frontmatter")
async def load_every_skill(assignment: Assignment) -> None:
    """List the skills and load each, refusing (and stopping at) any file that fails checks."""
    async with connected(assignment, capabilities=_skills_capabilities()) as session:
        for entry in (await session.request("skills/list")).get("skills") or []:
            await load_skill(session, entry)
