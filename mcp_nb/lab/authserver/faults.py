"""The lab authorization server's knobs: a fault per rule the OAuth client must check, what
the protected resource takes (DPoP), how long tokens live. Light: every lab start imports it."""

from __future__ import annotations

#: The access tokens' ``expires_in`` unless ``--auth-token-lifetime`` says otherwise.
TOKEN_LIFETIME = 3600

#: ``--auth-fault NAME`` → the rule it breaks (what a client must do about it).
AUTH_FAULTS: dict[str, str] = {
    "wrong-issuer": "the metadata names another issuer (RFC 8414 §3.3: refuse it)",
    "missing-iss": "the redirect omits iss although advertised (RFC 9207: refuse the code)",
    "wrong-iss": "the redirect carries another issuer's iss (RFC 9207: refuse the code)",
    "unexpected-iss": "iss not advertised, but sent with a wrong value (RFC 9207: refuse)",
    "resource-mismatch": "the protected resource metadata names another resource "
                         "(RFC 9728 §3.3: refuse it)",
    "step-up": "tools/call needs the scope mcp:call, granted only when asked for "
               "(403 insufficient_scope: re-authorize with more scope)",
    "endless-step-up": "every tools/call answers 403 insufficient_scope (a client must stop)",
    "expired-token": "tokens expire after 8 seconds (refresh, then retry)",
    "refresh-refused": "refresh tokens are refused (authorize again)",
    "no-s256": "the metadata advertises no PKCE S256 (a client must refuse)",
    "pre-registered-only": "the metadata offers neither Client ID Metadata Documents nor "
                           "Dynamic Client Registration (only pre-registered clients: the "
                           "spec's SHOULD is CIMD)",
    "no-dpop": "the authorization server offers no DPoP (with --auth-dpop required, a client "
               "must refuse: no DPoP-bound token can come from it)",
    "migration": "after the first token, the resource moves to a second authorization server "
                 "(register again; show it nothing from the first)",
    "cross-origin-redirect": "the server metadata redirects to another origin (refuse)",
    "html-metadata": "the server metadata is an HTML page (refuse, name the rule)",
    "huge-metadata": "the server metadata is 1 MiB (refuse it unread)",
    "reject-tokens": "the resource rejects every token with 401 (a client must stop)",
    "legacy-layout": "the 2025-03-26 layout: no protected resource metadata, the "
                     "authorization server's metadata and endpoints on the MCP server's "
                     "origin (fall back to them)",
    "legacy-defaults": "the 2025-03-26 layout without even that metadata: only /authorize, "
                       "/token and /register on the MCP server's origin (use those defaults)",
}


def check_faults(names: list[str]) -> frozenset[str]:
    unknown = [name for name in names if name not in AUTH_FAULTS]
    if unknown:
        raise ValueError(f"unknown --auth-fault {', '.join(unknown)}; known: "
                         f"{', '.join(AUTH_FAULTS)}")
    return frozenset(names)


#: ``--auth-prm-discovery MODE`` → how a client finds the resource's Protected Resource Metadata.
#: The MCP spec lets a server offer either mechanism (the challenge's ``resource_metadata``, or
#: the well-known URIs), and a client MUST support both.
PRM_DISCOVERY: dict[str, str] = {
    "header": "the 401's WWW-Authenticate names resource_metadata (the document is served "
              "beside the authorization server)",
    "well-known": "the 401 names no resource_metadata; the MCP server serves the document at "
                  "its path-inserted well-known URI (/.well-known/oauth-protected-resource/mcp)",
    "well-known-root": "the 401 names no resource_metadata; the MCP server serves the document "
                       "at the root well-known URI only (/.well-known/oauth-protected-resource), "
                       "so a client finds it on its second try",
}

#: ``--auth-dpop MODE`` → what the MCP server's metadata says and which tokens it takes.
DPOP_MODES: dict[str, str] = {
    "bearer": "the resource's metadata names no DPoP and it takes Bearer tokens only (an "
              "Authorization: DPoP header is refused, as a Bearer-only resource does)",
    "accepted": "the resource's metadata lists dpop_signing_alg_values_supported ES256; it "
                "takes Bearer tokens and DPoP-bound ones with their proofs",
    "required": "the resource's metadata also says dpop_bound_access_tokens_required: true; "
                "it takes DPoP-bound tokens only, and challenges with DPoP",
}
