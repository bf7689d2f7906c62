"""Client ID Metadata Documents at the lab authorization server: fetch one, check it, and
verify the ``private_key_jwt`` assertions of the client it describes.

A ``client_id`` that is a URL names a JSON document the client publishes about itself
(draft-ietf-oauth-client-id-metadata-document, which the MCP authorization spec cites).
The lab fetches it on every authorization request (and at the token endpoint when it has
not seen it yet): no redirect is followed, the body is read up to 5 KiB, only a JSON
object served as JSON with a 200 counts, and its ``client_id`` must be the URL, compared
as plain strings. The signatures are checked by joserfc; nothing here is hand-made crypto.

The draft forbids fetching special-use addresses, but lets a server used for development
fetch from loopback when it runs on loopback itself — which the lab always does. So here,
and only here, ``http://127.0.0.1…`` and ``http://localhost…`` client ids are accepted too,
so that tests can publish documents without TLS.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

#: The draft's recommended limit on what is read of a document.
MAX_DOCUMENT_BYTES = 5 * 1024
FETCH_TIMEOUT = 10.0
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: What a document's client may use at the token endpoint: no shared secret can exist.
DOCUMENT_AUTH_METHODS = ("none", "private_key_jwt")
SHARED_SECRET_METHODS = ("client_secret_basic", "client_secret_post", "client_secret_jwt")
JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_ALGORITHMS = ("RS256", "PS256", "ES256", "ES384", "EdDSA")
#: JWK members that only a private (or symmetric) key has.
PRIVATE_KEY_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "k"})
RULE = "CIMD (draft-ietf-oauth-client-id-metadata-document)"


class ClientRefused(Exception):
    """An OAuth error about the client (RFC 6749 §5.2): ``invalid_client``, ``invalid_request``."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


@dataclass
class Client:
    """A client the lab knows: pre-registered, registered (RFC 7591), or from a document."""

    client_id: str
    secret: str | None
    redirect_uris: list[str] = field(default_factory=list)
    issuer: str = ""  #: the issuer it registered with; "" for any (pre-registered, documents)
    auth_method: str = "none"
    name: str = ""
    keys: dict[str, Any] | None = None  #: the document's JWK Set, for private_key_jwt

    @property
    def confidential(self) -> bool:
        return self.secret is not None or self.auth_method == "private_key_jwt"


def is_document_client_id(client_id: str) -> bool:
    """Whether a client id is a URL the lab should fetch (its own ids never are)."""
    return client_id.startswith(("https://", "http://"))


def check_client_id_url(url: str) -> None:
    """Refuse a client id that is not a Client Identifier URL (the draft's §2)."""
    parts = urlsplit(url)
    problem = None
    if parts.scheme != "https" and not (parts.scheme == "http"
                                        and parts.hostname in LOOPBACK_HOSTS):
        problem = "it must use https (the lab also accepts http on loopback, for tests)"
    elif parts.username is not None or parts.password is not None:
        problem = "it must not contain a user name or password"
    elif not parts.path:
        problem = "it must contain a path"
    elif any(segment in (".", "..") for segment in parts.path.split("/")):
        problem = "it must not contain . or .. path segments"
    elif parts.fragment or url.endswith("#"):
        problem = "it must not contain a fragment"
    if problem:
        raise ClientRefused("invalid_client", f"the client id {url!r} is not a Client "
                            f"Identifier URL: {problem} ({RULE} §2)")


async def _check_address(url: str) -> None:
    """Refuse a host that resolves to a special-use address (SSRF); loopback is the lab's
    exception. (httpx resolves again: a lab guard, not a production one.)"""
    parts = urlsplit(url)
    try:
        found = await anyio.getaddrinfo(parts.hostname or "", parts.port or 443)
    except OSError as exc:
        raise ClientRefused("invalid_client", f"cannot resolve {parts.hostname}: {exc}"
                            ) from None
    for *_, address in found:
        ip = ipaddress.ip_address(str(address[0]).split("%")[0])
        if not (ip.is_loopback or ip.is_global):
            raise ClientRefused("invalid_client", f"{parts.hostname} resolves to the "
                                f"special-use address {ip}; an authorization server must not "
                                f"fetch it ({RULE}, SSRF)")


async def fetch_json(url: str, what: str) -> dict[str, Any]:
    """A small JSON object from ``url``: 200 only, no redirect followed, at most 5 KiB."""
    await _check_address(url)
    body = bytearray()
    try:
        async with httpx.AsyncClient(follow_redirects=False, timeout=FETCH_TIMEOUT,
                                     trust_env=False) as http, http.stream(
                "GET", url, headers={"Accept": "application/json"}) as response:
            if response.is_redirect:
                raise ClientRefused("invalid_client", f"the {what} at {url} answered "
                                    f"{response.status_code}, a redirect; an authorization "
                                    f"server must not follow it ({RULE} §4)")
            if response.status_code != 200:
                raise ClientRefused("invalid_client", f"the {what} at {url} answered "
                                    f"{response.status_code}, not 200 ({RULE} §4)")
            media = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json" and not media.endswith("+json"):
                raise ClientRefused("invalid_client", f"the {what} at {url} is served as "
                                    f"{media or 'no content type'}, not JSON ({RULE} §3)")
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise ClientRefused("invalid_client", f"the {what} at {url} is over "
                                        f"{MAX_DOCUMENT_BYTES:,} bytes; reading stopped "
                                        f"there ({RULE}: maximum response size)")
    except httpx.HTTPError as exc:
        raise ClientRefused("invalid_client", f"could not fetch the {what} at {url}: "
                            f"{type(exc).__name__} ({RULE} §4.1: abort the request)") from None
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise ClientRefused("invalid_client", f"the {what} at {url} is not a JSON object "
                            f"({RULE} §3)")
    return document


async def fetch_client(url: str) -> Client:
    """The client a Client ID Metadata Document describes, once every rule holds."""
    check_client_id_url(url)
    document = await fetch_json(url, "client metadata document")
    if document.get("client_id") != url:
        raise ClientRefused("invalid_client", f"the document at {url} names client_id "
                            f"{document.get('client_id')!r}; it must be the document's URL, "
                            f"exactly ({RULE} §3)")
    name, redirect_uris = document.get("client_name"), document.get("redirect_uris")
    if not isinstance(name, str) or not isinstance(redirect_uris, list) or not redirect_uris \
            or not all(isinstance(uri, str) for uri in redirect_uris):
        raise ClientRefused("invalid_client", f"the document at {url} lacks client_name or a "
                            "list of redirect_uris (MCP authorization: required properties)")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise ClientRefused("invalid_client", f"the document at {url} carries a client "
                            f"secret; no shared secret can exist with a document ({RULE} §3.1)")
    method = document.get("token_endpoint_auth_method", "none")
    if method not in DOCUMENT_AUTH_METHODS:
        why = ("a shared secret cannot exist with a document" if method in SHARED_SECRET_METHODS
               else "the lab supports none and private_key_jwt")
        raise ClientRefused("invalid_client", f"the document at {url} asks for "
                            f"token_endpoint_auth_method {method!r}: {why} ({RULE} §3.1)")
    keys = await _document_keys(url, document) if method == "private_key_jwt" else None
    return Client(url, None, list(redirect_uris), "", method, name, keys)


async def _document_keys(url: str, document: dict[str, Any]) -> dict[str, Any]:
    """The public keys of a ``private_key_jwt`` client: ``jwks``, or fetched ``jwks_uri``."""
    inline, uri = document.get("jwks"), document.get("jwks_uri")
    if (inline is None) == (uri is None):
        raise ClientRefused("invalid_client", f"the document at {url} uses private_key_jwt "
                            "and must give exactly one of jwks and jwks_uri (RFC 7591 §2)")
    if uri is not None:
        if not isinstance(uri, str):
            raise ClientRefused("invalid_client", f"jwks_uri of {url} is not a URL")
        check_client_id_url(uri)  # the same URL rules: https (or loopback), no fragment…
        inline = await fetch_json(uri, "JWK Set")
    keys = inline.get("keys") if isinstance(inline, dict) else None
    if not isinstance(keys, list) or not keys or not all(isinstance(k, dict) for k in keys):
        raise ClientRefused("invalid_client", f"the JWK Set of {url} has no keys (RFC 7517 §5)")
    if any(PRIVATE_KEY_MEMBERS & key.keys() for key in keys):
        raise ClientRefused("invalid_client", f"the JWK Set of {url} holds private or "
                            f"symmetric key material; only public keys may be published "
                            f"({RULE} §3.1)")
    return {"keys": keys}


def check_redirect_uri(client: Client, redirect_uri: str) -> None:
    """The redirect URI must be one the client registered, compared as plain strings."""
    if client.redirect_uris and redirect_uri not in client.redirect_uris:
        source = "its client metadata document" if is_document_client_id(
            client.client_id) else "its registration"
        raise ClientRefused("invalid_request", f"redirect_uri {redirect_uri!r} is not one of "
                            f"the redirect_uris in {source} (RFC 9700 §4.1.1: exact match)")


def assertion_subject(assertion: str) -> str:
    """Who an assertion says it comes from (unverified: it only picks the keys to check it)."""
    try:
        claims = json.loads(jws.extract_compact(assertion.encode()).payload)
    except (JoseError, ValueError):
        claims = None
    subject = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(subject, str):
        raise ClientRefused("invalid_client", "client_assertion is not a JWT with a sub "
                            "claim (RFC 7523 §3)")
    return subject


def verify_assertion(client: Client, assertion: str, audiences: Collection[str],
                     seen: set[str]) -> None:
    """Check a ``private_key_jwt`` assertion (RFC 7523 §3) with the client's own keys.

    ``seen`` holds the ``jti`` of assertions already used: each is good once.
    """
    key_set = KeySet.import_key_set(client.keys or {"keys": []})
    header = jws.extract_compact(assertion.encode()).headers()
    # joserfc picks a key by kid; an assertion without one may be signed by any of them.
    candidates = [key for key in key_set.keys if header.get("kid") in (None, key.kid)]
    token = None
    for key in candidates:
        try:
            token = jwt.decode(assertion, key, algorithms=list(ASSERTION_ALGORITHMS))
            break
        except (JoseError, ValueError):
            continue
    if token is None:
        raise ClientRefused("invalid_client", "client_assertion is not signed by a key of "
                            f"{client.client_id} (RFC 7523 §3: verify the signature)")
    claims = token.claims
    audience = claims.get("aud")
    named = set(audience) if isinstance(audience, list) else {audience}
    problem = None
    if claims.get("iss") != client.client_id or claims.get("sub") != client.client_id:
        problem = "iss and sub must both be the client id"
    elif not named & set(audiences):
        problem = f"aud must name this authorization server ({' or '.join(audiences)})"
    elif not isinstance(claims.get("exp"), (int, float)) or claims["exp"] < time.time():
        problem = "exp is missing or past"
    elif claims.get("jti") in seen:
        problem = "its jti was used before (a replay)"
    if problem:
        raise ClientRefused("invalid_client", f"client_assertion refused: {problem} "
                            "(RFC 7523 §3)")
    if isinstance(claims.get("jti"), str):
        seen.add(claims["jti"])
