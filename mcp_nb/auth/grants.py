"""The token exchanges: authorization code with PKCE, client credentials, JWT bearer, refresh."""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any
from urllib.parse import urlencode

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc7523 import private_key_jwt_sign
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc.errors import JoseError
from joserfc.jwk import import_key

from ..i18n import _
from . import discovery
from .dpop import DpopKey
from .errors import AuthorizationFailed, oauth_error_text
from .flow_values import AuthState, BrowserNeed, ClientSettings, Need, ServerMetadata
from .identity import ClientIdentity
from .steps import shown_form, shown_response, shown_url
from .tokens import Registration, Token
from .trail import Trail

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: RFC 7523 §2.1: a JWT (a workload's identity, SEP-1933) exchanged for an access token.
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: RFC 8693 token exchange, and the token types of enterprise-managed authorization (SEP-990).
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


class Grants:
    """Asks the token endpoint (and, for SEP-990, the identity provider) for tokens."""

    def __init__(self, trail: Trail, settings: ClientSettings, state: AuthState,
                 redirect_uri: str, identity: ClientIdentity) -> None:
        self.trail = trail
        self.settings = settings
        self.state = state
        self.redirect_uri = redirect_uri
        self.identity = identity

    def authorization_code(self, server: ServerMetadata, registration: Registration,
                           resource: str, scope: str | None
                           ) -> Generator[Need, Any, Token]:
        endpoint = server.get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationFailed(
                _("{issuer} has no authorization_endpoint").format(issuer=server.issuer),
                rule="RFC 8414 §2")
        methods = server.get("code_challenge_methods_supported")
        if not (isinstance(methods, list) and "S256" in methods) and not (
                self.settings.allow_without_s256 or server.legacy):
            raise AuthorizationFailed(
                _("the authorization server {issuer} does not advertise PKCE S256 "
                  "(code_challenge_methods_supported: {methods})").format(
                    issuer=server.issuer, methods=repr(methods)),
                rule="MCP authorization: "
                     "clients MUST refuse to proceed without PKCE S256 support",
                fix=_("refusing; for a lesson only, pass allow_without_s256=True"))
        verifier = generate_token(64)
        state = generate_token(32)
        query = {"response_type": "code", "client_id": registration.client_id,
                 "redirect_uri": self.redirect_uri, "state": state,
                 "code_challenge": create_s256_code_challenge(verifier),
                 "code_challenge_method": "S256", "resource": resource}
        if scope:
            query["scope"] = scope
        if "offline_access" in (scope or "").split():
            # OpenID Connect Core 1.0 §11: a server MUST ignore offline_access unless the
            # prompt includes consent (OpenID providers such as oidc-provider drop it, and
            # with it the refresh token). Plain OAuth servers ignore a prompt they don't use.
            query["prompt"] = "consent"
        url = str(httpx.URL(endpoint).copy_merge_params(query))
        redirect: str = yield BrowserNeed(url, self.redirect_uri)
        self.trail.note("authorize", f"GET {shown_url(url)}", f"redirect {shown_url(redirect)}",
                        "OAuth 2.1 §4.1 with PKCE S256 and RFC 8707 resource" + (
                            "; prompt=consent for a refresh token (OpenID Connect Core §11)"
                            if "prompt" in query else ""), "ok")
        code = self._callback(server, redirect, state)
        fields = {"grant_type": "authorization_code", "code": code,
                  "redirect_uri": self.redirect_uri, "code_verifier": verifier,
                  "resource": resource}
        answer = yield from self._token_request(server, registration, fields)
        token = Token.from_response(answer, resource=resource, issuer=server.issuer,
                                    requested_scope=scope)
        return token

    def _callback(self, server: ServerMetadata, redirect: str, state: str) -> str:
        """The code from the redirect, once ``state`` and RFC 9207 ``iss`` are checked."""
        params = httpx.URL(redirect).params
        if params.get("state") != state:
            self.trail.note("callback", shown_url(redirect), "", "OAuth 2.1 §4.1.2: state MUST "
                            "match", "refused")
            raise AuthorizationFailed(
                _("the redirect's state does not match the one sent"),
                rule="OAuth 2.1 §7.2.1 (CSRF protection)",
                fix=_("start the authorization again from this notebook"))
        issuer_sent = params.get("iss")
        advertised = server.get("authorization_response_iss_parameter_supported") is True
        if advertised and issuer_sent is None:
            raise AuthorizationFailed(
                _("the redirect has no iss although the authorization server advertises it"),
                rule="RFC 9207 §2.4: a client MUST reject a response without iss when the "
                     "server advertises authorization_response_iss_parameter_supported",
                fix=_("refusing the code (a mix-up attack looks like this)"))
        if issuer_sent is not None and issuer_sent != server.issuer:
            raise AuthorizationFailed(
                _("the redirect says iss {issuer_sent} but the request went to {issuer}").format(
                    issuer_sent=repr(issuer_sent), issuer=repr(server.issuer)),
                rule="RFC 9207 §2.4: iss MUST equal the issuer "
                     "(simple string comparison)",
                fix=_("refusing the code (a mix-up attack looks like this)"))
        if params.get("error"):
            raise AuthorizationFailed(
                _("the authorization server refused: {error}").format(
                    error=oauth_error_text(params)),
                rule="OAuth 2.1 §4.1.2.1")
        code = params.get("code")
        if not code:
            raise AuthorizationFailed(
                _("the redirect carries no code"),
                rule="OAuth 2.1 §4.1.2")
        self.trail.note("callback", shown_url(redirect), "code received",
                        "state matches; RFC 9207 iss " + ("checked" if issuer_sent else "absent"),
                        "ok")
        return code

    def client_credentials(self, server: ServerMetadata, resource: str, scope: str | None
                           ) -> Generator[Need, Any, Token]:
        """A grant without a browser: client credentials, or a JWT bearer assertion."""
        settings = self.settings
        if settings.client_id is None:
            raise AuthorizationFailed(
                _("the {grant} grant needs a client id").format(grant=settings.grant),
                rule="OAuth 2.1 §4.2, RFC 7523 §3",
                fix=_("pass client_id=…"))
        registration = Registration(server.issuer, settings.client_id, settings.client_secret,
                                    self.identity.auth_method(server, settings.client_secret))
        fields = {"grant_type": "client_credentials", "resource": resource}
        if settings.grant == "enterprise":
            assertion = yield from self._identity_assertion(server, resource, scope)
            fields = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion}
        elif settings.grant == "jwt_bearer":
            if not settings.assertion:
                raise AuthorizationFailed(
                    _("the JWT bearer grant needs an assertion"),
                    rule="RFC 7523 §2.1",
                    fix=_("pass assertion=JWT"))
            # No retry and no other grant after a refusal: the workload's identity is all
            # this client has (SEP-1933).
            fields = {"grant_type": JWT_BEARER_GRANT, "assertion": settings.assertion,
                      "resource": resource}
        if scope:
            fields["scope"] = scope
        answer = yield from self._token_request(server, registration, fields)
        return Token.from_response(answer, resource=resource, issuer=server.issuer,
                                   requested_scope=scope)

    def _identity_assertion(self, server: ServerMetadata, resource: str, scope: str | None
                            ) -> Generator[Need, Any, str]:
        """SEP-990 step one: the enterprise IdP exchanges the user's id_token for an ID-JAG."""
        identity = self.settings.enterprise
        if identity is None:
            raise AuthorizationFailed(
                _("enterprise-managed authorization needs the identity provider's settings"),
                rule="SEP-990",
                fix=_("pass enterprise=EnterpriseIdentity(…)"))
        discovery.require_secure(identity.token_endpoint, "identity provider token endpoint")
        fields = {"grant_type": TOKEN_EXCHANGE_GRANT, "requested_token_type": ID_JAG_TYPE,
                  "subject_token": identity.id_token, "subject_token_type": ID_TOKEN_TYPE,
                  "audience": server.issuer, "resource": resource}
        if scope:
            fields["scope"] = scope
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   "Accept": "application/json"}
        method = "client_secret_basic" if identity.client_secret else "none"
        _method, headers, body = ClientAuth(identity.client_id or "", identity.client_secret,
                                      method).prepare("POST", identity.token_endpoint, headers,
                                                      urlencode(fields))
        request = httpx.Request("POST", identity.token_endpoint, headers=headers, content=body)
        shown = f"POST {identity.token_endpoint} {shown_form(fields)}"
        response = yield from self.trail.exchange("token", request, shown)
        answer = discovery.json_document(response.content, response.headers.get(
            "content-type", ""), "token exchange response", identity.token_endpoint
            ) if response.content else {}
        assertion = answer.get("access_token")
        if response.status_code != 200 or not isinstance(assertion, str):
            raise AuthorizationFailed(
                _("the identity provider refused the token exchange: {error}").format(
                    error=answer.get("error", response.status_code)),
                rule="RFC 8693 §2.2 (SEP-990)",
                fix=_("check the id_token and the identity provider's client settings"))
        self.trail.note("token", shown, shown_response(response), "RFC 8693: id_token exchanged "
                        "for an identity assertion grant (SEP-990)", "ok")
        return assertion

    def refresh(self, server: ServerMetadata, held: Token, resource: str
                ) -> Generator[Need, Any, Token | None]:
        registration = self.state.registrations.get(server.issuer) or Registration(
            server.issuer, self.settings.client_id or "", self.settings.client_secret,
            self.identity.auth_method(server, self.settings.client_secret))
        fields = {"grant_type": "refresh_token", "refresh_token": held.refresh_token or "",
                  "resource": resource}
        try:
            answer = yield from self._token_request(server, registration, fields,
                                                    step="refresh")
        except AuthorizationFailed:
            self.trail.note("refresh", "", "", "OAuth 2.1 §4.3: a refused refresh token is "
                            "dropped", "fallback", "authorizing again")
            return None
        return held.with_refresh(answer)

    def _token_request(self, server: ServerMetadata, registration: Registration,
                       fields: dict[str, str], step: str = "token"
                       ) -> Generator[Need, Any, dict[str, Any]]:
        endpoint = server.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationFailed(
                _("{issuer} has no token_endpoint").format(issuer=server.issuer),
                rule="RFC 8414 §2")
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   "Accept": "application/json"}
        method = registration.auth_method
        if method == "private_key_jwt":
            if not self.settings.private_key:
                raise AuthorizationFailed(
                    _("private_key_jwt needs a private key"),
                    rule="RFC 7523 §2.2",
                    fix=_("pass private_key=PEM"))
            # The assertion's audience is the authorization server's issuer (RFC 7523bis).
            alg = self.settings.signing_algorithm
            assertion = private_key_jwt_sign(signing_key(self.settings.private_key, alg),
                                             registration.client_id, server.issuer, alg=alg)
            fields = {**fields, "client_assertion_type": JWT_BEARER_ASSERTION,
                      "client_assertion": _text(assertion)}
            body = urlencode(fields)
        else:
            _method, headers, body = ClientAuth(registration.client_id, registration.client_secret,
                                          method).prepare("POST", endpoint, headers,
                                                          urlencode(fields))
        dpop = self._dpop_key()
        sent_fields = dict(httpx.QueryParams(body).multi_items())
        shown = f"POST {endpoint} {shown_form(sent_fields)} (client auth: {method}" + (
            ", DPoP proof)" if dpop else ")")
        nonce: str | None = None
        for _attempt in range(2):  # a use_dpop_nonce answer is retried once, with the nonce
            if dpop is not None:
                headers = {**headers, "DPoP": dpop.proof("POST", endpoint, nonce=nonce)}
            request = httpx.Request("POST", endpoint, headers=headers, content=body)
            response = yield from self.trail.exchange(step, request, shown)
            answer = discovery.json_document(response.content, response.headers.get(
                "content-type", ""), "token response", endpoint) if response.content else {}
            nonce = response.headers.get("dpop-nonce")
            if not (dpop and answer.get("error") == "use_dpop_nonce" and nonce):
                break
            self.trail.note(step, shown, shown_response(response), "RFC 9449 §8: the server "
                            "wants its nonce in the proof", "fallback", "retrying with the nonce")
        if response.status_code != 200 or "access_token" not in answer:
            error = oauth_error_text(answer, f"HTTP {response.status_code}")
            self.trail.note(step, shown, shown_response(response), "OAuth 2.1 §3.2.4", "refused",
                            error)
            raise AuthorizationFailed(
                _("the token endpoint refused: {error}").format(error=error),
                rule="OAuth 2.1 §3.2.4",
                fix=_("check the client's credentials and the scopes asked for"))
        token_type = str(answer.get("token_type", "")).lower()
        if token_type not in (("dpop", "bearer") if dpop else ("bearer",)):
            raise AuthorizationFailed(
                _("the token endpoint issued a {token_type} token").format(
                    token_type=repr(token_type)),
                rule="MCP authorization: Bearer tokens (RFC 6750), or "
                     "DPoP-bound ones when a DPoP proof was sent (RFC 9449)")
        self.trail.note(step, shown, shown_response(response), "OAuth 2.1 §3.2.3: token issued",
                        "ok", f"scope {answer.get('scope') or fields.get('scope') or '(none)'}, "
                        f"expires in {answer.get('expires_in', '?')} s")
        return answer

    def _dpop_key(self) -> DpopKey | None:
        """This client's DPoP key when the flow decided to bind its tokens, else None."""
        decision = self.state.dpop_decision
        if decision is None or not decision.use:
            return None
        if self.state.dpop is None:
            self.state.dpop = DpopKey()
        return self.state.dpop



def _text(value: str | bytes) -> str:
    return value.decode("ascii") if isinstance(value, bytes) else value


#: The key type each family of JWS algorithms signs with (RFC 7518 §3.1, RFC 8037 §3.1).
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


def signing_key(private_key: str, alg: str) -> Any:
    """The client's private key (PEM, or a JWK as JSON) as a key of the type ``alg`` needs.

    Imported with its type named, as joserfc asks: a key of another type is refused
    here rather than guessed at.
    """
    key_type = _KEY_TYPES.get(alg[:2])
    if key_type is None:
        raise AuthorizationFailed(
            _("no key type for the signing algorithm {alg}").format(alg=repr(alg)),
            rule="RFC 7518 §3.1",
            fix=_("sign with RS256, PS256, ES256 or EdDSA (signing_algorithm=…)"))
    text = private_key.strip()
    data: Any = json.loads(text) if text.startswith("{") else text
    try:
        return import_key(data, key_type)  # type: ignore[arg-type]
    except (ValueError, TypeError, JoseError) as exc:
        raise AuthorizationFailed(
            _("the private key is no {key_type} key, which {alg} needs: {exc}").format(
                key_type=key_type, alg=alg, exc=exc),
            rule="RFC 7523 §2.2: the assertion is signed with the "
                 "client's key",
            fix=_("pass the PEM (or JWK) of the key the client registered")) from None
