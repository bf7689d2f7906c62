"""DPoP proofs (RFC 9449) as the lab checks them, at its token endpoint and at its MCP server.

At the token endpoint a valid proof binds the token to the proof's key (its JWK
thumbprint, ``jkt``, RFC 7638); at the MCP server a DPoP-bound token counts only with a
proof for that request (method, URL), that token (``ath``) and that key. joserfc parses
and verifies; nothing here is crypto by hand.

``--auth-dpop MODE`` (:data:`~.faults.DPOP_MODES`) says what the MCP server takes. The authorization
server offers DPoP in every mode (unless ``--auth-fault no-dpop``), as oidc-provider and
several hosted identity providers do by default: a client must not take that offer as the
resource's wish.
"""

from __future__ import annotations

import base64
import hashlib
import time

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, import_key

#: The one algorithm the lab verifies (what its metadata lists).
PROOF_ALGORITHMS = ("ES256",)
#: A proof older (or further in the future) than this is refused (RFC 9449 §11.1).
MAX_PROOF_AGE = 300


class ProofRefused(Exception):
    """The proof is missing or wrong: ``invalid_dpop_proof`` (RFC 9449 §5, §7.1)."""


def check_proof(proof: str | None, method: str, url: str, *, seen: set[str],
                access_token: str | None = None, jkt: str | None = None) -> str:
    """The thumbprint of the key that signed a valid ``proof`` of this request; else refuse.

    ``access_token``: a resource request, whose proof carries the token's hash (``ath``);
    ``jkt``: the key the token (or refresh token) is bound to. ``seen`` holds the ``jti``
    of every proof accepted so far: a replayed proof is refused.
    """
    if not proof:
        raise ProofRefused("no DPoP proof (RFC 9449 §4)")
    try:
        header = jws.extract_compact(proof.encode("ascii")).protected
        public = header.get("jwk")
        if header.get("typ") != "dpop+jwt" or header.get("alg") not in PROOF_ALGORITHMS or (
                not isinstance(public, dict) or "d" in public):
            raise ProofRefused("the proof's header must be typ dpop+jwt, alg ES256 and a "
                               "public jwk (RFC 9449 §4.2)")
        key = import_key(public, "EC")
        assert isinstance(key, ECKey)
        claims = jwt.decode(proof, key, algorithms=list(PROOF_ALGORITHMS)).claims
    except (ValueError, UnicodeEncodeError, JoseError) as exc:
        raise ProofRefused(f"the proof is no valid signed JWT: {exc}") from None
    if claims.get("htm") != method or claims.get("htu") != url.split("?")[0]:
        raise ProofRefused(f"the proof is for {claims.get('htm')} {claims.get('htu')}, not "
                           f"{method} {url} (RFC 9449 §4.3)")
    issued = claims.get("iat")
    if not isinstance(issued, int | float) or abs(time.time() - issued) > MAX_PROOF_AGE:
        raise ProofRefused("the proof's iat is missing or too far from now (RFC 9449 §11.1)")
    jti = claims.get("jti")
    if not isinstance(jti, str) or jti in seen:
        raise ProofRefused("the proof's jti is missing or was seen before (RFC 9449 §11.1)")
    if access_token is not None:
        digest = hashlib.sha256(access_token.encode("ascii")).digest()
        if claims.get("ath") != base64.urlsafe_b64encode(digest).rstrip(b"=").decode():
            raise ProofRefused("the proof's ath is not the hash of the token (RFC 9449 §4.3)")
    thumbprint = key.thumbprint()
    if jkt is not None and thumbprint != jkt:
        raise ProofRefused("the proof is signed by another key than the token is bound to "
                           "(RFC 9449 §4.3, §5)")
    seen.add(jti)
    return thumbprint

