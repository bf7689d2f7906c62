"""DPoP (RFC 9449): a key of this client's own, and a fresh signed proof for each request.

joserfc (authlib's JOSE library) makes the key and signs; nothing here is crypto by hand.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time

import httpx
from joserfc import jwt
from joserfc.jwk import ECKey

#: The one algorithm this client signs proofs with.
DPOP_ALGORITHM = "ES256"


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
