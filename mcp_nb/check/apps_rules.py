"""The checkup's MCP Apps rules (extension ``io.modelcontextprotocol/ui``, SEP-1865, 2026-01-26).

A server offers Apps to clients that declare the extension, so these checks run on
a session of their own that declares it (an open session is used as it is).  The
UI resources are the ``ui://`` ones ``resources/list`` shows and those App tools
name in ``_meta.ui.resourceUri``; each is read once with ``resources/read`` (reads
have no side effects; no tool is called) and judged as the kit's App host judges
it before rendering (:func:`mcp_nb.apps.meta.ui_resource`,
:func:`mcp_nb.apps.csp.sandbox_policy`).

Example::

    await check_apps(checkup, new_apps_session, main)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..apps.csp import CSP_KEYS, sandbox_policy
from ..apps.meta import EXTENSION, AppResourceError, resource_uri, ui_resource
from ..client import ClientSession
from ..i18n import _
from ..protocol.errors import McpError
from .recorder import SessionRecorder

APPS_CHECKS = ("apps.resource", "apps.mime-type", "apps.csp")
#: UI resources read at most (a server with hundreds is judged on a sample).
MAX_RESOURCES = 20
MAX_PAGES = 20


async def _listed(checkup: SessionRecorder, session: ClientSession, name: str, method: str,
                  key: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every item of a paginated list, and the exchanges."""
    items: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []
    params: dict[str, Any] | None = None
    for _page in range(MAX_PAGES):
        answer, entries = await checkup.exchange(session, name, method, params)
        evidence += entries
        if not isinstance(answer, dict):
            break
        items += [i for i in answer.get(key) or [] if isinstance(i, dict)]
        cursor = answer.get("nextCursor")
        if not isinstance(cursor, str):
            break
        params = {"cursor": cursor}
    return items, evidence


async def check_apps(checkup: SessionRecorder, new_session: Callable[[], ClientSession] | None,
                     main: ClientSession) -> None:
    """apps.resource, apps.mime-type, apps.csp for every UI resource the server offers."""
    if new_session is None:
        await _judge(checkup, main, "main")
        return
    session = new_session()
    checkup.side_sessions.append(("apps", session))
    try:
        async with session:
            # In the era the main session settled: a server that exits on the server/discover
            # probe is spoken to in the handshake era, as the main session then was.
            await session.connect(era=main.era or "auto")
            await _judge(checkup, session, "apps")
    except McpError as exc:
        checkup.skip(APPS_CHECKS, _("a session declaring {extension} could not be used: "
                                    "{error}").format(extension=EXTENSION, error=exc))


async def _judge(checkup: SessionRecorder, session: ClientSession, name: str) -> None:
    capabilities = session.capabilities.server
    tools, tool_evidence = (await _listed(checkup, session, name, "tools/list", "tools")
                            if "tools" in capabilities else ([], []))
    resources, _entries = (await _listed(checkup, session, name, "resources/list", "resources")
                    if "resources" in capabilities else ([], []))
    named = {uri: tool.get("name") for tool in tools if (uri := resource_uri(tool))}
    listed = [r["uri"] for r in resources if isinstance(r.get("uri"), str)
              and r["uri"].startswith("ui://")]
    uris = list(dict.fromkeys([*named, *listed]))[:MAX_RESOURCES]
    if not uris:
        checkup.skip(APPS_CHECKS, _("no MCP App offered to a client declaring {extension} (no "
                     "ui:// resource listed, no tool with _meta.ui.resourceUri)").format(
                         extension=EXTENSION))
        return
    missing: list[str] = []
    mime: list[str] = []
    csp: list[str] = []
    declared = 0
    problems_evidence: dict[str, list[dict[str, Any]]] = {c: [] for c in APPS_CHECKS}
    all_evidence: list[dict[str, Any]] = []
    for uri in uris:
        by = _(" (named by tool {name})").format(name=repr(named[uri])) if uri in named else ""
        answer, entries = await checkup.exchange(session, name, "resources/read",
                                                 {"uri": uri})
        all_evidence += entries
        if not isinstance(answer, dict):
            missing.append(_("{uri}{by}: resources/read failed: {error}").format(
                uri=uri, by=by, error=answer))
            problems_evidence["apps.resource"] += entries
            continue
        try:
            resource = ui_resource(uri, answer)
        except AppResourceError as exc:
            which = "apps.mime-type" if exc.rule == "apps.mime-type" else "apps.resource"
            (mime if which == "apps.mime-type" else missing).append(
                f"{uri}{by}: {exc.problem}")
            problems_evidence[which] += entries
            continue
        if resource.csp is not None:
            declared += 1
            if not isinstance(resource.csp, dict):
                csp.append(_("{uri}: _meta.ui.csp is not an object").format(uri=uri))
            else:
                csp += [f"{uri}: {value} ({why})" for value, why
                        in sandbox_policy(resource.csp).refused]
            if csp:
                problems_evidence["apps.csp"] += entries
    evidence = tool_evidence[:2] + all_evidence[:6]
    for check, problems, fine in (
            ("apps.resource", missing, _("{count} UI resource(s) read as ui:// HTML").format(
                count=len(uris))),
            ("apps.mime-type", mime, _("{count} read with mimeType "
                                     "text/html;profile=mcp-app").format(
                                         count=len(uris) - len(missing)))):
        if problems:
            checkup.put(check, "fail", "; ".join(problems[:5]), problems_evidence[check][:6])
        elif check == "apps.mime-type" and len(missing) == len(uris):
            checkup.skip([check], _("no UI resource could be read"))
        else:
            checkup.put(check, "pass", fine, evidence)
    if csp:
        checkup.put("apps.csp", "fail", "; ".join(csp[:5]), problems_evidence["apps.csp"][:6])
    elif declared:
        checkup.put("apps.csp", "pass", _("{count} resource(s) declare _meta.ui.csp, every "
                    "value a list of origins ({keys})").format(
                        count=declared, keys=", ".join(CSP_KEYS)), evidence)
    else:
        checkup.skip(["apps.csp"], _("no UI resource declares _meta.ui.csp (hosts then apply "
                     "the spec's restrictive default: no external origin)"))
