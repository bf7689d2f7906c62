"""The client side of the conformance suite's ``auth/*`` scenarios, on mcp_nb's public API.

Each scenario's mock authorization server approves at once, so the code comes back
through :class:`~mcp_nb.auth.AutoApproved` (the headless callback that follows the
authorization URL's redirect). Scenario data (a pre-registered client, a private
key) arrives in ``MCP_CONFORMANCE_CONTEXT``.
"""

from __future__ import annotations

from ..auth import AutoApproved, EnterpriseIdentity, OAuth
from .registry import Assignment, plays
from .scenarios import connected, sample_arguments

#: The Client ID Metadata Document the suite's CIMD scenarios expect this client to use
#: (the suite does not fetch it; a real client publishes its own at an https URL).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"

AUTHORIZATION_CODE_SCENARIOS = (
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
    "auth/authorization-server-migration", "auth/iss-supported", "auth/iss-not-advertised",
    "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected",
    "auth/iss-normalized", "auth/metadata-issuer-mismatch", "auth/dpop", "auth/dpop-nonce",
)


def oauth_for(assignment: Assignment) -> OAuth:
    """The OAuth settings a scenario calls for (pre-registration, CIMD, or registration)."""
    context = assignment.context
    if assignment.scenario in ("auth/enterprise-managed-authorization",
                               "auth/cross-app-access-complete-flow"):
        return OAuth(grant="enterprise", client_id=context.get("client_id"),
                     client_secret=context.get("client_secret"),
                     enterprise=EnterpriseIdentity(
                         token_endpoint=context.get("idp_token_endpoint", ""),
                         id_token=context.get("idp_id_token", ""),
                         client_id=context.get("idp_client_id")))
    if assignment.scenario == "auth/wif-jwt-bearer":
        return OAuth(grant="jwt_bearer", client_id=context.get("client_id"),
                     assertion=context.get("valid_jwt"))
    if assignment.scenario.startswith("auth/client-credentials"):
        return OAuth(grant="client_credentials", client_id=context.get("client_id"),
                     client_secret=context.get("client_secret"),
                     private_key=context.get("private_key_pem"),
                     signing_algorithm=context.get("signing_algorithm") or "RS256")
    return OAuth(client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                 client_metadata_url=CLIENT_METADATA_URL,
                 callback=AutoApproved(redirect_uri=REDIRECT_URI))


@plays(*AUTHORIZATION_CODE_SCENARIOS, "auth/client-credentials-basic",
       "auth/client-credentials-jwt", "auth/wif-jwt-bearer",
       "auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow")
async def authorize_and_call(assignment: Assignment) -> None:
    """Connect through OAuth, list the tools and call each one (a call may need step-up)."""
    async with connected(assignment,
                         transport_options={"auth": oauth_for(assignment)}) as session:
        if "tools" not in session.capabilities.server:
            return
        for tool in await session.list_tools():
            await session.call_tool(tool.name, sample_arguments(tool.inputSchema))
