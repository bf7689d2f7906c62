"""The lab authorization server's command-line flags, and starting it beside the MCP server."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .faults import AUTH_FAULTS, DPOP_MODES, PRM_DISCOVERY, TOKEN_LIFETIME, check_faults

if TYPE_CHECKING:
    from mcp_nb.lab.http.routing import Guard


def auth_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mcp_nb.lab", add_help=False)
    group = parser.add_argument_group("authorization (with --http)")
    group.add_argument("--auth", action="store_true",
                       help="Make /mcp a protected resource (OAuth 2.1) with the lab "
                       "authorization server beside it (its URL goes to stderr): dynamic "
                       "registration, pre-registered clients, and Client ID Metadata "
                       "Documents (a URL client id is fetched; http only on loopback).")
    group.add_argument("--auth-approval", choices=("auto", "page"), default="auto",
                       help="auto: approve every authorization request at once (tests); page: "
                       "show a page with an Approve button (people).")
    group.add_argument("--auth-dpop", choices=tuple(DPOP_MODES), default="bearer",
                       help="What the protected MCP server takes (its authorization server "
                       "offers DPoP in every mode, as real ones often do): " + "; ".join(
                           f"{mode}: {what}" for mode, what in DPOP_MODES.items()))
    group.add_argument("--auth-prm-discovery", choices=tuple(PRM_DISCOVERY), default="header",
                       help="How a client finds the MCP server's Protected Resource Metadata "
                       "(a server must offer one of the two mechanisms, a client must support "
                       "both): " + "; ".join(
                           f"{mode}: {what}" for mode, what in PRM_DISCOVERY.items()))
    group.add_argument("--auth-token-lifetime", type=int, default=TOKEN_LIFETIME,
                       metavar="SECONDS", help="The access tokens' expires_in (default "
                       f"{TOKEN_LIFETIME}; a few seconds shows how a client renews).")
    group.add_argument("--auth-fault", action="append", default=[], metavar="NAME",
                       choices=sorted(AUTH_FAULTS),
                       help="Break one authorization rule on purpose: " + "; ".join(
                           f"{name}: {what}" for name, what in AUTH_FAULTS.items()))
    return parser


def split_auth_arguments(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The authorization flags, and the rest for the lab's own parser."""
    return auth_parser().parse_known_args(list(argv))


def start_authorization(options: argparse.Namespace) -> list[Guard]:
    """Start the authorization server (in a thread) and return the MCP server's guard.

    Imported here, not above: a stdio lab server needs neither h11 nor these modules.
    Its URL goes to stderr: the first stdout line stays the MCP server's.
    """
    from .guard import protected_resource_guard
    from .server import PRE_REGISTERED, LabAuthorizationServer

    server = LabAuthorizationServer(check_faults(options.auth_fault), options.auth_approval,
                                    dpop=options.auth_dpop,
                                    prm_discovery=options.auth_prm_discovery,
                                    token_lifetime=options.auth_token_lifetime)
    base = server.start_in_thread()
    clients = ", ".join(f"{cid} (secret {secret})" if secret else f"{cid} (public)"
                        for cid, secret in PRE_REGISTERED.items())
    where = ("on the MCP server's origin (the 2025-03-26 layout)" if server.legacy
             else f"at {base}")
    print(f"mcp_nb lab: authorization server {where}; pre-registered clients: {clients}; "
          "a URL client id is fetched as a Client ID Metadata Document",
          file=sys.stderr, flush=True)
    return [protected_resource_guard(server)]
