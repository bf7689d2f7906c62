"""The checkup's authorization rules, for a server that answered 401: reads only.

From the 401's ``WWW-Authenticate`` to the Protected Resource Metadata (RFC 9728),
then to the authorization server's metadata (RFC 8414 / OpenID Connect
Discovery), judging each document as the OAuth client (:mod:`mcp_nb.auth`) does
before it trusts it.  Only metadata is fetched (``GET``): no client is
registered, no authorization is asked for, no token is obtained.

Example::

    plain = await probe.post(initialize, {})
    if plain.status == 401:
        await check_authorization(checkup, client, url, plain)
"""

from __future__ import annotations

from typing import Any

import httpx

from ..auth.challenge import Challenge, parse_challenges
from ..auth.discovery import (
    authorization_server_metadata_urls,
    check_issuer,
    check_resource,
    json_document,
    prm_urls,
)
from ..auth.errors import AuthorizationFailed
from ..i18n import _
from .http_evidence import Answer, http_evidence
from .recorder import Recorder

LATER = ("auth.resource-metadata", "auth.server-metadata", "auth.pkce-s256",
         "auth.client-registration")


async def _get(client: httpx.AsyncClient, url: str
               ) -> tuple[dict[str, Any] | None, str, dict[str, Any]]:
    """A metadata document (None if not served there), why not, and the exchange."""
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        return None, _("{url}: no answer ({error})").format(url=url, error=repr(exc)), {"http": {
            "request": {"method": "GET", "url": url, "headers": {}, "body": None},
            "response": {"status": None, "headers": {}, "body": repr(exc)}}}
    evidence = http_evidence("GET", url, {"Accept": "application/json"}, None,
                             response.status_code, response.headers, response.text[:2000])
    if response.status_code != 200:
        return None, _("{url} answered {status}").format(
            url=url, status=response.status_code), evidence
    try:
        document = json_document(response.content, response.headers.get("content-type", ""),
                                 "metadata", url)
    except AuthorizationFailed as exc:
        return None, str(exc), evidence
    return document, "", evidence


async def check_authorization(checkup: Recorder, client: httpx.AsyncClient, url: str,
                              challenged: Answer) -> None:
    """auth.* for the 401 ``challenged``: the challenge, both metadata documents, PKCE and
    how clients may get an identity."""
    evidence = [challenged.evidence]
    headers = challenged.headers.get_list("www-authenticate")
    challenges = [c for header in headers for c in parse_challenges(header)]
    bearer: Challenge | None = next((c for c in challenges if c.scheme == "bearer"), None)
    problems = []
    if not challenges:
        problems.append(_("the 401 carries no WWW-Authenticate challenge"))
    elif bearer is None:
        problems.append(_("the 401 challenges with {schemes}, "
                        "not Bearer").format(schemes=", ".join(c.scheme for c in challenges)))
    named = bearer.resource_metadata if bearer is not None else None
    prm: dict[str, Any] | None = None
    tried: list[str] = []
    found_at = ""
    for candidate in prm_urls(url, named):
        document, why, exchange = await _get(client, candidate)
        evidence.append(exchange)
        if document is not None:
            prm, found_at = document, candidate
            break
        tried.append(why)
        if candidate == named:
            problems.append(_("WWW-Authenticate names resource_metadata {url}, which serves "
                            "no metadata ({why})").format(url=named, why=why))
    if prm is None:
        problems.append(_("no Protected Resource Metadata at {tried}").format(
                        tried="; ".join(tried or [_("any well-known URI")])))
    how = (_("named in WWW-Authenticate") if found_at and found_at == named
           else _("at a well-known URI"))
    checkup.put("auth.discovery", "fail" if problems else "pass",
                "; ".join(problems) or _("Bearer challenge; resource metadata {how} "
                                         "({url})").format(how=how, url=found_at),
                evidence)
    if prm is None:
        checkup.skip(LATER, _("no Protected Resource Metadata was found to follow"))
        return
    prm_evidence = evidence[-1:]
    servers = prm.get("authorization_servers")
    problems = []
    try:
        check_resource(prm, url, found_at)
    except AuthorizationFailed as exc:
        problems.append(str(exc))
    if not (isinstance(servers, list) and servers and all(isinstance(s, str) for s in servers)):
        problems.append(_("authorization_servers is {servers}, not a list of at least one "
                        "issuer").format(servers=repr(servers)))
    checkup.put("auth.resource-metadata", "fail" if problems else "pass",
                "; ".join(problems) or _("resource {resource} is this server; "
                "authorization_servers {servers}").format(
                    resource=repr(prm.get("resource")), servers=servers), prm_evidence)
    if not (isinstance(servers, list) and servers and isinstance(servers[0], str)):
        checkup.skip(LATER[1:], _("the resource metadata names no authorization server"))
        return
    await _server_metadata(checkup, client, servers[0])


async def _server_metadata(checkup: Recorder, client: httpx.AsyncClient, issuer: str) -> None:
    evidence: list[dict[str, Any]] = []
    tried: list[str] = []
    metadata: dict[str, Any] | None = None
    for candidate in authorization_server_metadata_urls(issuer):
        document, why, exchange = await _get(client, candidate)
        evidence.append(exchange)
        if document is not None:
            metadata = document
            break
        tried.append(why)
    if metadata is None:
        checkup.put("auth.server-metadata", "fail", _("no metadata for issuer {issuer}: "
                    "{tried}").format(issuer=issuer, tried="; ".join(tried)), evidence)
        checkup.skip(LATER[2:], _("the authorization server's metadata could not be read"))
        return
    try:
        check_issuer(metadata, issuer, evidence[-1]["http"]["request"]["url"])
    except AuthorizationFailed as exc:
        checkup.put("auth.server-metadata", "fail", str(exc), evidence[-1:])
    else:
        checkup.put("auth.server-metadata", "pass", _("issuer {issuer} exactly, at "
                    "{url}").format(issuer=issuer, url=evidence[-1]["http"]["request"]["url"]),
                    evidence[-1:])
    methods = metadata.get("code_challenge_methods_supported")
    if isinstance(methods, list) and "S256" in methods:
        checkup.put("auth.pkce-s256", "pass", _("code_challenge_methods_supported {methods}")
                    .format(methods=methods), evidence[-1:])
    else:
        checkup.put("auth.pkce-s256", "fail", _("code_challenge_methods_supported is "
                    "{methods}: without S256 a conforming client refuses to proceed").format(
                        methods=repr(methods)),
                    evidence[-1:])
    offers = [what for what, offered in (
        ("Client ID Metadata Documents", metadata.get("client_id_metadata_document_supported")
         is True),
        ("Dynamic Client Registration", isinstance(metadata.get("registration_endpoint"), str)),
    ) if offered]
    checkup.put("auth.client-registration", "pass" if offers else "fail",
                _("offers {ways}").format(ways=offers[0] if len(offers) == 1 else _(
                    "{first} and {second}").format(first=offers[0], second=offers[1]))
                if offers else _(
                "neither "
                "client_id_metadata_document_supported nor a registration_endpoint: clients "
                "must be pre-registered"), evidence[-1:])
