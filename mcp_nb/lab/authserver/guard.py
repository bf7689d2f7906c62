"""The lab MCP server as a protected resource: a guard that wants a valid token (Bearer, or
DPoP-bound with its proof, as ``--auth-dpop`` says)."""

from __future__ import annotations

import json

from mcp_nb.lab.http.routing import Guard, Refusal
from mcp_nb.lab.http.wire import HttpRequest
from mcp_nb.lab.rpc import diag

from .dpop import PROOF_ALGORITHMS, ProofRefused, check_proof
from .server import LEGACY_PATHS, Grant, LabAuthorizationServer


def _method(request: HttpRequest) -> str | None:
    try:
        message = json.loads(request.body) if request.body else None
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


#: What the resource takes in each ``--auth-dpop`` mode (said in its 401's body).
WANTED = {"bearer": "a valid Bearer token", "accepted": "a valid Bearer or DPoP-bound token",
          "required": "a valid DPoP-bound token"}


def protected_resource_guard(server: LabAuthorizationServer) -> Guard:
    """401 with a ``WWW-Authenticate`` challenge without a valid token; 403 for step-up.

    In the 2025-03-26 layout the guard also answers, on the MCP server's origin, for the
    authorization server (its metadata, ``/authorize``, ``/token``, ``/register``).
    """
    proofs_seen: set[str] = set()  # the jti of every proof accepted here (replays refused)

    def presented(request: HttpRequest, url: str) -> tuple[Grant | None, str]:
        """The grant behind the request's token, if it is presented as the mode allows; else
        why not."""
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        scheme = scheme.lower()
        grant = None if "reject-tokens" in server.faults else server.verify(token or None)
        if grant is None:
            return None, f"{WANTED[server.dpop]} is required"
        if scheme == "bearer" and server.dpop != "required" and (
                grant.jkt is None or server.dpop == "bearer"):
            return grant, ""
        if scheme == "dpop" and server.dpop != "bearer" and grant.jkt is not None:
            try:
                check_proof(request.headers.get("dpop"), request.method, url, seen=proofs_seen,
                            access_token=token, jkt=grant.jkt)
            except ProofRefused as refusal:
                return None, str(refusal)
            return grant, ""
        # A Bearer-only resource refuses the DPoP scheme (as the MCP SDK's does); a DPoP-aware
        # one refuses a bound token shown as Bearer (RFC 9449 §7.2) and, when DPoP is
        # required, every Bearer token.
        return None, f"a {scheme or 'missing'} token is not taken here (--auth-dpop " \
                     f"{server.dpop})"

    async def guard(request: HttpRequest) -> Refusal | None:
        host = request.headers.get("host", "")
        if server.legacy and request.path in LEGACY_PATHS:
            answer = await server.answer(request, f"http://{host}")
            return Refusal(answer.status, "", answer.headers, answer.body, answer.content_type)
        if request.path.startswith("/.well-known/"):
            # Metadata is public. It lives on the authorization server, unless the challenge
            # does not point there: then this origin serves it at a well-known URI.
            if request.path != server.metadata_path_on_resource:
                return None
            server.note_resource(f"http://{host}/mcp")
            answer = server.protected_resource_metadata()
            return Refusal(answer.status, "", answer.headers, answer.body, answer.content_type)
        server.note_resource(f"http://{host}/mcp")
        # 2025-03-26 had no resource metadata, so no resource_metadata to point at; with
        # --auth-prm-discovery well-known… the client finds it at the well-known URIs.
        pointer = (f'resource_metadata="{server.resource_metadata_url}", '
                   if server.challenge_names_metadata else "")
        challenge = f'Bearer {pointer}scope="mcp"'
        if server.dpop == "required":  # RFC 9449 §7.1: the DPoP scheme, with its algorithms
            challenge = challenge.replace("Bearer", "DPoP", 1) + \
                f', algs="{" ".join(PROOF_ALGORITHMS)}"'
        grant, why = presented(request, f"http://{host}{request.path}")
        if grant is None:
            diag(f"401: {why}")
            return Refusal(401, f"Unauthorized: {why}", [("www-authenticate", challenge)])
        if _method(request) == "tools/call" and (
                "endless-step-up" in server.faults
                or ("step-up" in server.faults and "mcp:call" not in grant.scopes)):
            return Refusal(403, "Forbidden: tools/call needs the scope mcp:call", [(
                "www-authenticate", 'Bearer error="insufficient_scope", scope="mcp mcp:call"'
                + (f', resource_metadata="{server.resource_metadata_url}"'
                   if server.challenge_names_metadata else ""))])
        return None

    return guard
