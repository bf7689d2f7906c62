"""The lab authorization server's fault knobs: one per rule the OAuth client must check."""

from __future__ import annotations

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
