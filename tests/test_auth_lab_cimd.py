"""Client ID Metadata Documents: the real OAuth client, a client id that is a URL, the lab
authorization server fetching it — and every rule it checks, refused by name.

The documents are published by a real HTTP server on 127.0.0.1 (the lab accepts
loopback ``http://`` client ids for exactly this), which records what it was asked.
"""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import pytest
from auth_support import use
from http_support import ServerProcess, lab_server
from joserfc.jwk import ECKey

from mcp_nb.auth import AuthorizationFailed, Headless, OAuth
from mcp_nb.auth.callbacks import DEFAULT_REDIRECT_URI
from mcp_nb.client import RequestFailed

PUBLIC = {"client_name": "CIMD test client", "redirect_uris": [DEFAULT_REDIRECT_URI],
          "token_endpoint_auth_method": "none"}


@dataclass
class Published:
    """What the document server answers for one path."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


class DocumentServer:
    """A loopback HTTP server publishing client metadata documents (and JWK Sets)."""

    def __init__(self) -> None:
        self.published: dict[str, Published] = {}
        self.fetched: list[str] = []
        documents = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                documents.fetched.append(self.path)
                answer = documents.published.get(self.path, Published(b"", 404))
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def publish(self, path: str, document: dict[str, Any] | None = None, *,
                client_id: str | None = None, **answer: Any) -> str:
        """Publish ``document`` (``client_id`` defaults to its own URL) at ``path``."""
        url = self.base + path
        if document is not None:
            answer["body"] = json.dumps({"client_id": client_id or url, **document}).encode()
        self.published[path] = Published(**answer)
        return url


@pytest.fixture(scope="module")
def documents() -> Iterator[DocumentServer]:
    server = DocumentServer()
    yield server
    server.http.shutdown()
    server.http.server_close()


@pytest.fixture(scope="module")
def lab() -> Iterator[ServerProcess]:
    with lab_server("--auth") as server:
        yield server


def _connect(lab: ServerProcess, auth: OAuth) -> list[str]:
    return anyio.run(lambda: use(lab.ready_text, auth))


def test_a_url_client_id_is_fetched_and_nothing_is_registered(
        lab: ServerProcess, documents: DocumentServer) -> None:
    url = documents.publish("/public.json", PUBLIC)
    auth = OAuth(client_metadata_url=url, callback="auto-approved")
    assert "add" in _connect(lab, auth)
    assert [step.name for step in auth.steps] == [
        "challenge", "resource metadata", "server metadata", "register", "authorize",
        "callback", "token"]
    register = auth.steps[3]
    assert register.outcome == "skipped" and url in register.detail
    assert not any("/register" in step.sent for step in auth.steps)  # no DCR call
    assert auth.describe()["client_registration"] == "client id metadata document"
    assert auth.describe()["client_id"] == url
    assert "/public.json" in documents.fetched  # the authorization server read it


def test_the_metadata_says_documents_are_supported(lab: ServerProcess) -> None:
    challenge = httpx.post(lab.ready_text, json={}).headers["www-authenticate"]
    prm = httpx.get(challenge.split('resource_metadata="')[1].split('"')[0]).json()
    issuer = prm["authorization_servers"][0]
    metadata = httpx.get(issuer + "/.well-known/oauth-authorization-server").json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert "private_key_jwt" in metadata["token_endpoint_auth_methods_supported"]


class Browser:
    """Plays the person's browser and keeps the authorization server's answer."""

    def __init__(self) -> None:
        self.answer: httpx.Response | None = None

    def __call__(self, authorization_url: str) -> str:
        self.answer = httpx.get(authorization_url, follow_redirects=False)
        if self.answer.is_redirect:
            return self.answer.headers["location"]
        raise AuthorizationFailed(f"the authorization server answered {self.answer.status_code}",
                                  rule="the person saw the authorization server's error")


def _refused_in_the_browser(lab: ServerProcess, client_id: str) -> dict[str, Any]:
    """Run the real flow with ``client_id``; the error the authorization server showed."""
    browser = Browser()
    auth = OAuth(client_metadata_url=client_id, callback=Headless(browser))
    with pytest.raises(RequestFailed):
        _connect(lab, auth)
    assert auth.held() is None
    assert browser.answer is not None and browser.answer.status_code == 400
    assert "location" not in browser.answer.headers  # RFC 6749 §4.1.2.1: no redirect
    return browser.answer.json()


@pytest.mark.parametrize(("path", "published", "error", "rule"), [
    ("/other-id.json", {"document": PUBLIC, "client_id": "http://127.0.0.1:1/me.json"},
     "invalid_client", "it must be the document's URL, exactly"),
    ("/unlisted.json", {"document": {**PUBLIC, "redirect_uris": ["http://localhost/else"]}},
     "invalid_request", "is not one of the redirect_uris in its client metadata document"),
    ("/page.html", {"body": b"<html>a login page</html>", "content_type": "text/html"},
     "invalid_client", "served as text/html, not JSON"),
    ("/broken.json", {"body": b"{not json"}, "invalid_client", "is not a JSON object"),
    ("/huge.json", {"document": {**PUBLIC, "logo": "x" * 6000}},
     "invalid_client", "is over 5,120 bytes"),
    ("/moved.json", {"body": b"", "status": 302, "headers": {"Location": "/moved-to.json"}},
     "invalid_client", "a redirect; an authorization server must not follow it"),
    ("/missing.json", {"body": b"", "status": 404}, "invalid_client", "answered 404, not 200"),
    ("/no-name.json", {"document": {"redirect_uris": [DEFAULT_REDIRECT_URI]}},
     "invalid_client", "lacks client_name"),
    ("/secret.json", {"document": {**PUBLIC, "client_secret": "s"}},
     "invalid_client", "carries a client secret"),
    ("/basic.json", {"document": {**PUBLIC, "token_endpoint_auth_method": "client_secret_basic"}},
     "invalid_client", "a shared secret cannot exist with a document"),
    ("/private.json", {"document": {**PUBLIC, "token_endpoint_auth_method": "private_key_jwt",
                                    "jwks": {"keys": [ECKey.generate_key("P-256").as_dict(
                                        private=True)]}}},
     "invalid_client", "holds private or symmetric key material"),
])
def test_each_document_rule_is_refused_by_name(
        lab: ServerProcess, documents: DocumentServer, path: str, published: dict[str, Any],
        error: str, rule: str) -> None:
    url = documents.publish(path, **published)
    refusal = _refused_in_the_browser(lab, url)
    assert refusal["error"] == error
    assert rule in refusal["error_description"]
    assert path in documents.fetched
    assert "/moved-to.json" not in documents.fetched  # no redirect was followed


@pytest.mark.parametrize(("client_id", "rule"), [
    ("http://mcp-nb.invalid/client.json", "it must use https"),
    ("http://someone@127.0.0.1:9/client.json", "must not contain a user name or password"),
    ("http://127.0.0.1:9/a/../client.json", "must not contain . or .. path segments"),
])
def test_a_client_id_that_is_no_client_identifier_url_is_not_fetched(
        lab: ServerProcess, client_id: str, rule: str) -> None:
    refusal = _refused_in_the_browser(lab, client_id)
    assert refusal["error"] == "invalid_client"
    assert rule in refusal["error_description"] and "§2" in refusal["error_description"]


def test_auto_approval_stops_at_a_refused_document(
        lab: ServerProcess, documents: DocumentServer) -> None:
    url = documents.publish("/auto-refused.json", PUBLIC, client_id="http://127.0.0.1:1/x")
    auth = OAuth(client_metadata_url=url, callback="auto-approved")
    # The lab's reason comes along: which rule the document broke.
    with pytest.raises(RequestFailed, match=r"answered 400 without a redirect: invalid_client — "
                       r".*client_id"):
        _connect(lab, auth)
    assert auth.held() is None


# -- private_key_jwt: the document publishes the public key -----------------------------------

def _signed_client(documents: DocumentServer, path: str, key: ECKey, *,
                   by_uri: bool = False) -> str:
    public = {"keys": [key.as_dict(private=False)]}
    keys: dict[str, Any] = {"jwks": public}
    if by_uri:
        keys = {"jwks_uri": documents.publish(path + ".jwks", body=json.dumps(public).encode())}
    return documents.publish(path, {**PUBLIC, "token_endpoint_auth_method": "private_key_jwt",
                                    **keys})


@pytest.mark.parametrize("by_uri", [False, True], ids=["jwks", "jwks_uri"])
def test_private_key_jwt_with_the_documents_keys(
        lab: ServerProcess, documents: DocumentServer, by_uri: bool) -> None:
    key = ECKey.generate_key("P-256", private=True)
    pem = key.as_pem(private=True).decode()
    url = _signed_client(documents, f"/signed-{by_uri}.json", key, by_uri=by_uri)
    # A browser flow: the URL client id is used as it is; the token request is signed.
    auth = OAuth(client_id=url, private_key=pem, signing_algorithm="ES256",
                 callback="auto-approved")
    assert "add" in _connect(lab, auth)
    assert "client auth: private_key_jwt" in auth.steps[-1].sent
    # No browser: the client credentials grant, the document fetched at the token endpoint.
    machine = OAuth(grant="client_credentials", client_id=url, private_key=pem,
                    signing_algorithm="ES256")
    assert "add" in _connect(lab, machine)


def test_a_metadata_document_client_with_a_private_key_signs_its_token_requests(
        lab: ServerProcess, documents: DocumentServer) -> None:
    key = ECKey.generate_key("P-256", private=True)
    url = _signed_client(documents, "/signed-by-document.json", key)
    auth = OAuth(client_metadata_url=url, private_key=key.as_pem(private=True).decode(),
                 signing_algorithm="ES256", callback="auto-approved")
    assert "add" in _connect(lab, auth)
    register = next(step for step in auth.steps if step.name == "register")
    assert "Client ID Metadata Documents" in register.rule
    assert "client auth: private_key_jwt" in auth.steps[-1].sent


def test_an_assertion_signed_by_another_key_is_refused(
        lab: ServerProcess, documents: DocumentServer) -> None:
    url = _signed_client(documents, "/wrong-key.json", ECKey.generate_key("P-256"))
    stranger = ECKey.generate_key("P-256", private=True).as_pem(private=True).decode()
    auth = OAuth(grant="client_credentials", client_id=url, private_key=stranger,
                 signing_algorithm="ES256")
    with pytest.raises(RequestFailed) as failed:
        _connect(lab, auth)
    assert "invalid_client" in str(failed.value)
    assert "not signed by a key of" in str(failed.value)


def test_a_private_key_jwt_client_must_sign(
        lab: ServerProcess, documents: DocumentServer) -> None:
    url = _signed_client(documents, "/unsigned.json", ECKey.generate_key("P-256"))
    auth = OAuth(client_id=url, token_endpoint_auth_method="none", callback="auto-approved")
    with pytest.raises(RequestFailed) as failed:
        _connect(lab, auth)
    assert "must carry a signed client_assertion" in str(failed.value)


def test_the_approval_page_names_the_client_and_its_host(documents: DocumentServer) -> None:
    url = documents.publish("/named.json", {**PUBLIC, "client_name": "<b>Evil</b> & co"})
    seen: list[str] = []

    def person(authorization_url: str) -> str:
        page = httpx.get(authorization_url)
        seen.append(page.text)
        form = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page.text))
        action = re.search(r'action="([^"]+)"', page.text)
        assert action is not None
        approved = httpx.post(html.unescape(action.group(1)),
                              data={k: html.unescape(v) for k, v in form.items()})
        return approved.headers["location"]

    with lab_server("--auth", "--auth-approval", "page") as lab:
        assert "add" in _connect(lab, OAuth(client_metadata_url=url, callback=Headless(person)))
    host = documents.base.removeprefix("http://")
    assert f"Authorize &lt;b&gt;Evil&lt;/b&gt; &amp; co (from {host})?" in seen[0]
    assert "<b>Evil</b>" not in seen[0]
