"""The authorization flow's rules on their own: challenges, discovery order, refusals, redaction."""

from __future__ import annotations

import json
import os
import stat
from typing import Any

import httpx
import pytest

from mcp_nb.auth import AuthorizationFailed, FileStore, Token, bearer_challenge, discovery
from mcp_nb.auth.steps import shown_form, shown_url


def _response(status: int, *challenges: str) -> httpx.Response:
    return httpx.Response(status, headers=[("WWW-Authenticate", c) for c in challenges])


def test_a_401_is_a_challenge_even_without_a_header() -> None:
    assert bearer_challenge(_response(401)) is not None
    challenge = bearer_challenge(_response(401, 'Basic realm="x"',
                                           'Bearer resource_metadata="https://r/prm"'))
    assert challenge is not None and challenge.resource_metadata == "https://r/prm"


def test_a_403_is_a_challenge_only_for_insufficient_scope() -> None:
    assert bearer_challenge(_response(403, 'Bearer error="invalid_token"')) is None
    step_up = bearer_challenge(_response(403, 'Bearer error="insufficient_scope", '
                                              'scope="a b"'))
    assert step_up is not None and step_up.scopes == ("a", "b")
    assert bearer_challenge(_response(200)) is None


def test_quoted_values_keep_commas_and_escapes() -> None:
    challenge = bearer_challenge(_response(401, r'Bearer error_description="no, \"never\""'))
    assert challenge is not None
    assert challenge.params["error_description"] == 'no, "never"'


def test_the_resource_must_cover_the_server_url() -> None:
    good = {"resource": "https://r.example/mcp"}
    assert discovery.check_resource(good, "https://R.example/mcp/", "m") == good["resource"]
    assert discovery.check_resource({"resource": "https://r.example"},
                                    "https://r.example/mcp", "m")
    for other in ("https://evil.example/mcp", "https://r.example/other",
                  "http://r.example/mcp"):
        with pytest.raises(AuthorizationFailed, match=r"RFC 9728 §3\.3"):
            discovery.check_resource({"resource": other}, "https://r.example/mcp", "m")


def test_the_issuer_must_be_the_one_the_url_was_built_from() -> None:
    assert discovery.check_issuer({"issuer": "https://as.example/t1"}, "https://as.example/t1",
                                  "m")
    for wrong in ("https://as.example/t2", "https://evil.example/t1", None):
        with pytest.raises(AuthorizationFailed, match=r"RFC 8414 §3\.3"):
            discovery.check_issuer({"issuer": wrong}, "https://as.example/t1", "m")


def test_endpoints_off_loopback_must_be_https() -> None:
    discovery.check_endpoints({"token_endpoint": "http://127.0.0.1:9/token"})
    discovery.check_endpoints({"token_endpoint": "https://as.example/token"})
    with pytest.raises(AuthorizationFailed, match="not https"):
        discovery.check_endpoints({"token_endpoint": "http://as.example/token"})


def test_metadata_that_is_html_or_huge_is_refused() -> None:
    with pytest.raises(AuthorizationFailed, match="not JSON"):
        discovery.json_document(b"<html>login</html>", "text/html", "metadata", "u")
    with pytest.raises(AuthorizationFailed, match="bytes"):
        discovery.json_document(b"{" + b" " * discovery.MAX_METADATA_BYTES + b"}",
                                "application/json", "metadata", "u")
    with pytest.raises(AuthorizationFailed, match="not an object"):
        discovery.json_document(b"[1]", "application/json", "metadata", "u")


def test_secrets_never_show() -> None:
    token = Token("s3cret-token", resource="https://r/mcp", issuer="https://as",
                  refresh_token="s3cret-refresh")
    assert "s3cret" not in repr(token) and "s3cret" not in str(token)
    assert "abc" not in shown_url("https://cb/x?code=abc&state=abc")
    assert "abc" not in shown_form({"client_secret": "abc", "code_verifier": "abc",
                                    "grant_type": "authorization_code"})


def test_the_file_store_is_private_to_its_owner(tmp_path) -> None:
    path = tmp_path / "tokens.json"
    FileStore(path).save(Token("t", resource="https://r/mcp", issuer="https://as"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    loaded = FileStore(path).load("https://r/mcp", "https://as")
    assert loaded is not None and loaded.access_token == "t"
    assert FileStore(path).load("https://r/mcp", "https://other") is None


def test_every_lab_fault_is_documented() -> None:
    from pathlib import Path

    from mcp_nb.lab.authserver.faults import AUTH_FAULTS

    text = (Path(__file__).resolve().parent.parent / "docs" / "authorization.md").read_text(
        encoding="utf-8")
    for name, what in AUTH_FAULTS.items():
        assert f"| `{name}` | {what} |" in text


def test_the_signing_key_is_imported_as_the_type_its_algorithm_needs() -> None:
    from joserfc.jwk import ECKey

    from mcp_nb.auth.grants import signing_key

    key = ECKey.generate_key("P-256", private=True)
    pem = key.as_pem(private=True).decode()
    assert isinstance(signing_key(pem, "ES256"), ECKey)
    assert isinstance(signing_key(json.dumps(key.as_dict(private=True)), "ES256"), ECKey)
    with pytest.raises(AuthorizationFailed, match="no RSA key, which RS256 needs"):
        signing_key(pem, "RS256")
    with pytest.raises(AuthorizationFailed, match="no key type for the signing algorithm"):
        signing_key(pem, "HS256")


@pytest.mark.parametrize(("setting", "signals", "server_algs", "outcome"), [
    ("auto", {}, ["ES256"], "not used: the resource does not ask"),
    ("auto", {"resource_algs": ("ES256",)}, ["ES256"], "used: the resource's metadata lists"),
    ("auto", {"resource_algs": ("ES256",)}, None, "not used: the resource's metadata lists"),
    ("auto", {"resource_algs": ("RS256",)}, ["ES256"], "not used: the resource verifies only"),
    ("auto", {"challenge_algs": ()}, ["ES256"], "used: the resource challenges with DPoP"),
    ("auto", {"challenge_algs": ("PS256",)}, ["ES256"], "not used: the resource verifies only"),
    ("auto", {"held_bound": True}, ["ES256"], "used: the held token is DPoP-bound"),
    ("auto", {"resource_required": True}, ["ES256", "RS256"], "used: the resource requires"),
    ("auto", {"resource_required": True}, ["RS256"], "refused: RFC 9728 §2 and RFC 9449 §5.1"),
    ("auto", {"resource_required": True, "resource_algs": ("RS256",)}, ["ES256"],
     "refused: RFC 9728 §2: dpop_signing_alg_values_supported"),
    (True, {}, ["ES256"], "used: forced (dpop=True)"),
    (True, {}, None, "refused: RFC 9728 §2 and RFC 9449 §5.1"),
    (False, {"resource_algs": ("ES256",), "challenge_algs": ()}, ["ES256"],
     "not used: switched off"),
    (False, {"resource_required": True}, ["ES256"], "refused: RFC 9728 §2: such a resource"),
])
def test_the_dpop_decision_table(setting: Any, signals: dict[str, Any], server_algs: Any,
                                 outcome: str) -> None:
    """DPoP when the resource asks (metadata, challenge, a bound token) and the server can."""
    from mcp_nb.auth.dpop import decide_dpop

    try:
        decision = decide_dpop(setting, issuer="https://as", server_algs=server_algs, **signals)
    except AuthorizationFailed as refused:
        said = f"refused: {refused.rule}"
        assert refused.fix  # every refusal says what to do
    else:
        said = decision.reason
        assert decision.use is said.startswith("used")
    assert said.startswith(outcome)


def test_a_token_is_renewed_early_by_at_most_a_tenth_of_its_life() -> None:
    """min(5 s, 10 % of expires_in): a 3-second token is usable for 2.7 s, not expired on
    arrival; an hour-long one is renewed 5 s early; one of unknown lifetime (an older token
    file) 5 s early."""
    now = 1000.0
    short = Token.from_response({"access_token": "a", "expires_in": 3}, resource="r",
                                issuer="i", requested_scope=None, now=now)
    assert short.lifetime == 3.0
    assert not short.expired(now=now) and not short.expired(now=now + 2.6)
    assert short.expired(now=now + 2.8)
    hour = Token.from_response({"access_token": "a", "expires_in": 3600}, resource="r",
                               issuer="i", requested_scope=None, now=now)
    assert not hour.expired(now=now + 3594) and hour.expired(now=now + 3595)
    unknown = Token("a", expires_at=now + 3)
    assert unknown.lifetime is None and unknown.expired(now=now)
