"""The lab MCP server as a protected resource: a guard that wants a valid Bearer token."""

from __future__ import annotations

import json

from mcp_nb.lab.http.routing import Guard, Refusal
from mcp_nb.lab.http.wire import HttpRequest
from mcp_nb.lab.rpc import diag

from .server import LEGACY_PATHS, LabAuthorizationServer


def _method(request: HttpRequest) -> str | None:
    try:
        message = json.loads(request.body) if request.body else None
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


def protected_resource_guard(server: LabAuthorizationServer) -> Guard:
    """401 with a ``WWW-Authenticate`` challenge without a valid token; 403 for step-up.

    In the 2025-03-26 layout the guard also answers, on the MCP server's origin, for the
    authorization server (its metadata, ``/authorize``, ``/token``, ``/register``).
    """

    async def guard(request: HttpRequest) -> Refusal | None:
        host = request.headers.get("host", "")
        if server.legacy and request.path in LEGACY_PATHS:
            answer = await server.answer(request, f"http://{host}")
            return Refusal(answer.status, "", answer.headers, answer.body, answer.content_type)
        if request.path.startswith("/.well-known/"):
            return None  # metadata is public (the lab's lives on the authorization server)
        server.note_resource(f"http://{host}/mcp")
        header = request.headers.get("authorization", "")
        token = header[7:] if header.lower().startswith("bearer ") else None
        # 2025-03-26 had no resource metadata, so no resource_metadata to point at.
        challenge = 'Bearer scope="mcp"' if server.legacy else (
            f'Bearer resource_metadata="{server.resource_metadata_url}", scope="mcp"')
        grant = None if "reject-tokens" in server.faults else server.verify(token)
        if grant is None:
            diag("401 for a request without a valid token")
            return Refusal(401, "Unauthorized: a valid Bearer token is required",
                           [("www-authenticate", challenge)])
        if _method(request) == "tools/call" and (
                "endless-step-up" in server.faults
                or ("step-up" in server.faults and "mcp:call" not in grant.scopes)):
            return Refusal(403, "Forbidden: tools/call needs the scope mcp:call", [(
                "www-authenticate", f'Bearer error="insufficient_scope", scope="mcp mcp:call", '
                f'resource_metadata="{server.resource_metadata_url}"')])
        return None

    return guard
