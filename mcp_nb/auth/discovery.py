"""Where the metadata lives and whether what came back may be trusted (pure functions).

Protected Resource Metadata (RFC 9728), authorization server metadata (RFC 8414 and
OpenID Connect Discovery, in the order the MCP authorization spec gives), the 2025-03-26
layout without either, and the checks that protect a token: canonical resource, exact
issuer, https endpoints (plain http only on loopback).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from ..i18n import _
from .errors import AuthorizationFailed

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN = "/.well-known/openid-configuration"
#: The 2025-03-26 layout's endpoints when the server publishes no metadata at all.
LEGACY_ENDPOINTS = {"authorization_endpoint": "/authorize", "token_endpoint": "/token",
                    "registration_endpoint": "/register"}
#: Metadata documents are small; a bigger body is refused unread.
MAX_METADATA_BYTES = 256 * 1024
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization"


def origin(url: str | httpx.URL) -> str:
    """``scheme://host[:port]`` of a URL, lower-cased, default ports dropped.

    >>> origin("HTTPS://Example.com:443/mcp?x=1")
    'https://example.com'
    """
    # An httpx.URL is used as it is: this runs on every authorized request.
    parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
    port = parsed.port
    default = {"http": 80, "https": 443}.get(parsed.scheme)
    netloc = parsed.host if ":" not in parsed.host else f"[{parsed.host}]"
    if port is not None and port != default:
        netloc += f":{port}"
    return f"{parsed.scheme}://{netloc}"


def canonical_resource(url: str | httpx.URL) -> str:
    """The canonical URI of an MCP server (RFC 8707 / MCP "canonical server URI").

    Lower-case scheme and host, no fragment, no query, no trailing slash.

    >>> canonical_resource("HTTP://LocalHost:8000/mcp/")
    'http://localhost:8000/mcp'
    """
    path = httpx.URL(str(url)).path.rstrip("/")
    return origin(url) + path


def is_loopback(url: str | httpx.URL) -> bool:
    host = httpx.URL(str(url)).host.lower()
    return host in LOOPBACK_HOSTS or host.endswith(".localhost")


def require_secure(url: str, what: str) -> str:
    """``url`` if it is https, or http on loopback; else refuse (OAuth 2.1 §1.5)."""
    parsed = httpx.URL(url)
    if parsed.scheme == "https" or (parsed.scheme == "http" and is_loopback(parsed)):
        return url
    raise AuthorizationFailed(
        _("the {what} {url} is not https").format(what=what, url=repr(url)),
        rule="OAuth 2.1 §1.5: endpoints MUST use TLS "
             "(plain http is tolerated only on loopback)",
        fix=_("ask the server's operator to publish https endpoints"))


def prm_urls(server_url: str, from_challenge: str | None) -> list[str]:
    """Where to look for Protected Resource Metadata, in order (RFC 9728 §3.1, MCP spec).

    >>> prm_urls("https://r.example/mcp", None)
    ['https://r.example/.well-known/oauth-protected-resource/mcp', \
'https://r.example/.well-known/oauth-protected-resource']
    """
    urls = [from_challenge] if from_challenge else []
    path = httpx.URL(server_url).path.rstrip("/")
    if path:
        urls.append(origin(server_url) + PRM_WELL_KNOWN + path)
    urls.append(origin(server_url) + PRM_WELL_KNOWN)
    return list(dict.fromkeys(urls))


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the MCP spec's order (RFC 8414 §3.1, OIDC).

    >>> authorization_server_metadata_urls("https://as.example/tenant1")
    ['https://as.example/.well-known/oauth-authorization-server/tenant1', \
'https://as.example/.well-known/openid-configuration/tenant1', \
'https://as.example/tenant1/.well-known/openid-configuration']
    >>> authorization_server_metadata_urls("https://as.example")
    ['https://as.example/.well-known/oauth-authorization-server', \
'https://as.example/.well-known/openid-configuration']
    """
    base = origin(issuer)
    path = httpx.URL(issuer).path.rstrip("/")
    if not path:
        return [base + OAUTH_WELL_KNOWN, base + OPENID_WELL_KNOWN]
    return [base + OAUTH_WELL_KNOWN + path, base + OPENID_WELL_KNOWN + path,
            base + path + OPENID_WELL_KNOWN]


def json_document(body: bytes, content_type: str, what: str, url: str) -> dict[str, Any]:
    """A metadata body as a JSON object; HTML, other text, or a non-object is refused."""
    if len(body) > MAX_METADATA_BYTES:
        raise AuthorizationFailed(
            _("the {what} at {url} is over {limit} bytes").format(
                what=what, url=url, limit=format(MAX_METADATA_BYTES, ",")),
            rule="metadata "
                 "documents are small JSON objects (RFC 8414 §3.2, RFC 9728 §3.2)",
            fix=_("check the URL: this is not a metadata document"))
    try:
        document = json.loads(body)
    except ValueError:
        kind = content_type.split(";")[0].strip() or "no content type"
        raise AuthorizationFailed(
            _("the {what} at {url} is not JSON ({kind}: {body})").format(
                what=what, url=url, kind=kind, body=repr(body[:60])),
            rule="metadata is a JSON object (RFC 8414 §3.2, RFC 9728 §3.2)",
            fix=_("check the URL: it may be a login page or an error page")) from None
    if not isinstance(document, dict):
        raise AuthorizationFailed(
            _("the {what} at {url} is JSON but not an object").format(what=what, url=url),
            rule="metadata is a JSON object (RFC 8414 §3.2)")
    return document


def check_resource(document: Mapping[str, Any], server_url: str, metadata_url: str) -> str:
    """The ``resource`` a PRM names, if it covers ``server_url``; refuse otherwise.

    It must be the server's own canonical URI or a parent of it on the same origin.
    """
    resource = document.get("resource")
    if not isinstance(resource, str) or not resource:
        raise AuthorizationFailed(
            _("the protected resource metadata at {metadata_url} names no resource").format(
                metadata_url=metadata_url),
            rule="RFC 9728 §2: resource is REQUIRED")
    server = canonical_resource(server_url)
    claimed = canonical_resource(resource)
    if origin(claimed) != origin(server) or not (
            server == claimed or server.startswith(claimed + "/")
            or httpx.URL(claimed).path in ("", "/")):
        raise AuthorizationFailed(
            _("the protected resource metadata says resource {resource} but was fetched for "
              "{server_url}").format(
                resource=repr(resource), server_url=repr(server_url)),
            rule="RFC 9728 §3.3: the resource MUST match the server's URL; "
                 "a token for it would be a token for another server",
            fix=_("refusing; connect to the resource's own URL, or report the server's "
                  "misconfiguration"))
    return resource


def check_issuer(document: Mapping[str, Any], expected: str, metadata_url: str) -> str:
    """The metadata's ``issuer`` if it is exactly the one expected; refuse otherwise."""
    issuer = document.get("issuer")
    if not isinstance(issuer, str) or issuer.rstrip("/") != expected.rstrip("/") or (
            httpx.URL(expected).path.strip("/") and issuer != expected):
        raise AuthorizationFailed(
            _("the authorization server's metadata says issuer {issuer} but was fetched for "
              "{expected}").format(issuer=repr(issuer), expected=repr(expected)),
            rule="RFC 8414 §3.3: the issuer MUST be identical to the one "
                 "the metadata URL was built from",
            fix=_("refusing; the resource names an authorization server whose metadata speaks for "
                  "another"))
    return issuer


def check_legacy_issuer(document: Mapping[str, Any], server_url: str, metadata_url: str) -> str:
    """The issuer of metadata found at the server's origin (2025-03-26): on that origin."""
    issuer = document.get("issuer")
    if not isinstance(issuer, str) or origin(issuer) != origin(server_url):
        raise AuthorizationFailed(
            _("the authorization server metadata at {metadata_url} says issuer {issuer}, not on "
              "the server's origin {server_url}").format(
                metadata_url=metadata_url, issuer=repr(issuer), server_url=origin(server_url)),
            rule="MCP 2025-03-26: "
                 "without protected resource metadata the authorization server is the server's "
                 "origin",
            fix=_("refusing; the server should publish protected resource metadata"))
    return issuer


def check_endpoints(document: Mapping[str, Any]) -> None:
    """Every endpoint the flow may use is https (or http on loopback)."""
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        value = document.get(name)
        if value is not None:
            if not isinstance(value, str):
                raise AuthorizationFailed(
                    _("{name} is not a URL: {value}").format(name=name, value=repr(value)),
                    rule="RFC 8414 §2")
            require_secure(value, name)


def legacy_metadata(server_url: str) -> dict[str, Any]:
    """The 2025-03-26 defaults: endpoints at the server's origin (no metadata anywhere)."""
    base = origin(server_url)
    return {"issuer": base, **{name: base + path for name, path in LEGACY_ENDPOINTS.items()},
            "code_challenge_methods_supported": ["S256"]}
