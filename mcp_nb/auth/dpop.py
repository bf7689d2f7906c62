"""DPoP (RFC 9449): whether to use it, a key of this client's own, and a fresh signed proof
for each request.

joserfc (authlib's JOSE library) makes the key and signs; nothing here is crypto by hand.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Literal

import httpx
from joserfc import jwt
from joserfc.jwk import ECKey

from ..i18n import _
from .errors import AuthorizationFailed

#: The one algorithm this client signs proofs with.
DPOP_ALGORITHM = "ES256"
#: ``OAuth(dpop=…)``: ``"auto"`` (when the resource asks for it), ``True`` (always), ``False``.
DpopSetting = Literal["auto", True, False]


class DpopKey:
    """An EC P-256 key pair held in memory for one :class:`~mcp_nb.auth.OAuth`.

    Its repr names no key material.

    >>> proof = DpopKey().proof("POST", "https://as.example/token?x=1")
    >>> proof.count(".")
    2
    """

    def __init__(self) -> None:
        self._key = ECKey.generate_key("P-256")
        self.public = self._key.as_dict(private=False)

    def __repr__(self) -> str:
        return f"DpopKey({DPOP_ALGORITHM})"

    def proof(self, method: str, url: str | httpx.URL, *, access_token: str | None = None,
              nonce: str | None = None) -> str:
        """A proof for one request: method, URL without query or fragment, time, unique id.

        With ``access_token`` it carries ``ath`` (the token's hash) for a resource
        request; with ``nonce`` the server's nonce (RFC 9449 §8, §9).
        """
        target = httpx.URL(str(url)).copy_with(query=None, fragment=None)
        claims: dict[str, object] = {"htm": method.upper(), "htu": str(target),
                                     "iat": int(time.time()), "jti": secrets.token_urlsafe(16)}
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": DPOP_ALGORITHM, "jwk": self.public}
        return jwt.encode(header, claims, self._key)


def supports_dpop(metadata_algorithms: object) -> bool:
    """Whether the server's ``dpop_signing_alg_values_supported`` includes ours."""
    return isinstance(metadata_algorithms, list) and DPOP_ALGORITHM in metadata_algorithms


@dataclass(frozen=True)
class DpopDecision:
    """Whether one flow binds its tokens to this client's key, and why (``OAuth.describe()``)."""

    use: bool
    reason: str


def decide_dpop(setting: DpopSetting, *, issuer: str, server_algs: object,
                resource_algs: tuple[str, ...] | None = None, resource_required: bool = False,
                challenge_algs: tuple[str, ...] | None = None,
                held_bound: bool = False) -> DpopDecision:
    """Use DPoP when the protected resource asks for it and its authorization server can.

    The resource asks through its metadata (RFC 9728 §2: ``dpop_signing_alg_values_supported``,
    ``dpop_bound_access_tokens_required``) or a ``DPoP`` challenge (RFC 9449 §7.1); a held
    DPoP-bound token asks too (its refresh is proven with the same key, RFC 9449 §5). The
    authorization server's metadata alone is not enough: many servers offer DPoP by default
    in front of resources that take only Bearer tokens (RFC 6750), which refuse
    ``Authorization: DPoP …``. ``setting`` ``True`` forces DPoP, ``False`` rules it out;
    both refuse what cannot work rather than fail later with a 401.

    >>> decide_dpop("auto", issuer="https://as", server_algs=["ES256"]).use
    False
    >>> decide_dpop("auto", issuer="https://as", server_algs=["ES256"],
    ...             resource_algs=("ES256",)).use
    True
    >>> try:
    ...     decide_dpop("auto", issuer="https://as", server_algs=None, resource_required=True)
    ... except AuthorizationFailed as refused:
    ...     print(refused.fix)
    the resource's operator must enable DPoP at https://as, or stop requiring it
    """
    if resource_required:
        asked: str | None = _("the resource requires DPoP-bound tokens "
                               "(dpop_bound_access_tokens_required)")
    elif resource_algs is not None:
        asked = _("the resource's metadata lists dpop_signing_alg_values_supported "
                  "{algorithms}").format(algorithms=" ".join(resource_algs) or _("(empty)"))
    elif challenge_algs is not None:
        asked = _("the resource challenges with DPoP (WWW-Authenticate: DPoP)")
    elif held_bound:
        asked = _("the held token is DPoP-bound (its refresh is proven with the same key)")
    else:
        asked = None
    if setting is False:
        if resource_required:
            raise AuthorizationFailed(
                _("{asked}, and DPoP is switched off (dpop=False)").format(asked=asked),
                rule="RFC 9728 §2: such a resource refuses Bearer tokens",
                fix=_("use dpop='auto' (%mcp connect … --dpop auto)"))
        return DpopDecision(False, _("not used: switched off (dpop=False)"))
    if setting != "auto" and setting is not True:
        raise ValueError(f"dpop={setting!r}: choose 'auto', True or False")
    if asked is None and setting == "auto":
        return DpopDecision(False, _("not used: the resource does not ask for it (no DPoP "
                                     "fields in its metadata, no DPoP challenge)"))
    why = _("forced (dpop=True)") if setting is True else str(asked)
    must = setting is True or resource_required
    verified = resource_algs if resource_algs is not None else challenge_algs
    if not supports_dpop(server_algs):
        if must:
            raise AuthorizationFailed(
                _("{why} but its authorization server {issuer} offers no DPoP with "
                  "{algorithm} (dpop_signing_alg_values_supported: {server_algs})").format(
                    why=why, issuer=issuer, algorithm=DPOP_ALGORITHM,
                    server_algs=repr(server_algs)),
                rule="RFC 9728 §2 and RFC 9449 §5.1: a DPoP-bound token comes only from an "
                     "authorization server that supports DPoP",
                fix=_("use dpop='auto' (--dpop auto)") if setting is True else
                    _("the resource's operator must enable DPoP at {issuer}, or stop requiring "
                      "it").format(issuer=issuer))
        return DpopDecision(False, _("not used: {why}, but the authorization server offers "
                                     "no DPoP with {algorithm}").format(
            why=why, algorithm=DPOP_ALGORITHM))
    if verified and DPOP_ALGORITHM not in verified:
        if must:
            raise AuthorizationFailed(
                _("the resource verifies DPoP proofs signed with {verified} only; this client "
                  "signs {algorithm}").format(
                    verified=" ".join(verified), algorithm=DPOP_ALGORITHM),
                rule="RFC 9728 §2: "
                     "dpop_signing_alg_values_supported (RFC 9449 §7.1: algs)",
                fix=_("ask the resource's operator to accept ES256 proofs"))
        return DpopDecision(False, _("not used: the resource verifies only {verified} "
                                     "proofs; this client signs {algorithm}").format(
            verified=" ".join(verified), algorithm=DPOP_ALGORITHM))
    return DpopDecision(True, _("used: {why}, and the authorization server supports "
                                "{algorithm}").format(why=why, algorithm=DPOP_ALGORITHM))
