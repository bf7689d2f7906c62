"""Getting the authorization code back, wherever the notebook runs.

Each callback mode knows its ``redirect_uri`` and turns an authorization URL into
the URL the browser was redirected to:

- :class:`Loopback`: a listener on 127.0.0.1 (ephemeral port) for a browser on the
  kernel's machine;
- :class:`PasteBack`: show the link; the user pastes the address they land on;
- :class:`Headless`: a callable you give (tests, CI, scripts);
- :class:`~mcp_nb.auth.jupyter.JupyterServerCallback`: the redirect lands on the Jupyter
  server itself (Binder, JupyterHub), through a small server extension;
- :class:`AutoApproved`: for authorization servers that approve without a person
  (the lab's, the conformance suite's): it follows the authorization URL itself;
- :class:`Unattended`: no person is there (a session between cells): the browser step
  fails at once, saying how to authorize again, rather than wait for nobody.

:func:`choose_callback` picks one (``"auto"``) or makes the one named.
"""

from __future__ import annotations

import inspect
import os
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio
import httpx

from ..i18n import _
from ..protocol.plaintext import plain_text
from .discovery import origin
from .errors import AuthorizationFailed, no_redirect_in_time, oauth_error_text
from .jupyter import JupyterServerCallback, public_url_from_environment

#: Where paste-back and headless modes say the browser goes back to (nothing listens there:
#: the user copies the address from the browser).
DEFAULT_REDIRECT_URI = "http://localhost/mcp_nb/callback"
#: How long a person has to authorize before the flow gives up.
DEFAULT_WAIT = 300.0


class Callback(Protocol):
    """A way to get the redirect back: its name, its redirect URI, and the wait itself."""

    name: str

    async def prepare(self) -> str:
        """Get ready (bind a port, say); return the redirect URI to register and send."""
        ...

    async def receive(self, authorization_url: str) -> str:
        """Send the user to ``authorization_url``; return the URL they were redirected to."""
        ...

    async def close(self) -> None: ...


class Headless:
    """Your callable gets the authorization URL and returns the redirect URL (sync or async).

    A plain (sync) function runs in a worker thread: it may block — an HTTP client, a
    browser driven by Playwright's sync API (which refuses to run where an event loop
    runs) — while the loop, and every other session on it, goes on.

    >>> Headless(lambda url: "http://localhost/mcp_nb/callback?code=c&state=s").name
    'headless'
    """

    name = "headless"

    def __init__(self, answer: Callable[[str], str | Awaitable[str]],
                 redirect_uri: str = DEFAULT_REDIRECT_URI) -> None:
        self.answer = answer
        self.redirect_uri = redirect_uri

    async def prepare(self) -> str:
        return self.redirect_uri

    async def receive(self, authorization_url: str) -> str:
        if inspect.iscoroutinefunction(self.answer):
            result = await self.answer(authorization_url)
        else:
            # Abandoned on cancel: an interrupted cell stops waiting for a stuck function.
            result = await anyio.to_thread.run_sync(self.answer, authorization_url,
                                                    abandon_on_cancel=True)
        if inspect.isawaitable(result):
            result = await result
        return str(result)

    async def close(self) -> None:
        return None


class AutoApproved(Headless):
    """For servers that approve at once: GET the authorization URL, read its redirect.

    The redirect must go to this client's ``redirect_uri``; nothing else is followed.
    """

    name = "auto-approved"

    def __init__(self, redirect_uri: str = DEFAULT_REDIRECT_URI,
                 client: Callable[[], httpx.AsyncClient] = httpx.AsyncClient) -> None:
        super().__init__(self._follow, redirect_uri)
        self._client = client

    async def _follow(self, authorization_url: str) -> str:
        async with self._client() as http:
            response = await http.get(authorization_url, follow_redirects=False)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise AuthorizationFailed(
                _("the authorization endpoint answered {status_code} without a "
                  "redirect{reason}").format(status_code=response.status_code,
                                             reason=_reason(response)),
                rule="auto-approval expects an immediate redirect",
                fix=_("authorize in a browser (callback='paste' or 'loopback')"))
        location = str(httpx.URL(authorization_url).join(location))
        if origin(location) != origin(self.redirect_uri):
            raise AuthorizationFailed(
                _("the authorization endpoint redirected to {location}, not to this client's "
                  "redirect URI").format(location=origin(location)),
                rule="OAuth 2.1 §4.1.2: the redirect goes to the "
                     "registered redirect_uri")
        return location


def _reason(response: httpx.Response) -> str:
    """``: error — description`` from an OAuth error answer, or its first words; else ``""``."""
    try:
        answer = response.json()
    except ValueError:
        answer = None
    text = oauth_error_text(answer) if isinstance(answer, dict) else ""
    if not text:
        text = " ".join(response.text.split())[:200]
    return f": {plain_text(text, one_line=True)}" if text else ""


class PasteBack:
    """Show the link; the user authorizes and pastes the address the browser lands on.

    ``show`` displays the link (``print`` by default; the notebook shows a widget) and
    ``ask`` reads the pasted URL (``input`` by default, called in a worker thread).
    """

    name = "paste-back"

    def __init__(self, show: Callable[[str], object] = print,
                 ask: Callable[[str], str] = input,
                 redirect_uri: str = DEFAULT_REDIRECT_URI) -> None:
        self.show, self.ask, self.redirect_uri = show, ask, redirect_uri

    async def prepare(self) -> str:
        return self.redirect_uri

    async def receive(self, authorization_url: str) -> str:
        self.show(f"Authorize here: {authorization_url}\nThen paste the address your browser "
                  "lands on (it starts with " + self.redirect_uri + ").")
        return (await anyio.to_thread.run_sync(self.ask, "Redirect URL: ")).strip()

    async def close(self) -> None:
        return None


class Loopback:
    """A one-shot listener on 127.0.0.1 (ephemeral port) that gets the redirect.

    ``browser`` opens the authorization URL (``webbrowser.open`` by default; ``None``
    only shows the link); ``show`` shows the link (``None``: the caller shows it, as the
    notebook's authorization view does); ``wait`` bounds how long a person may take.
    """

    name = "loopback"

    def __init__(self, *, browser: Callable[[str], bool] | None = webbrowser.open,
                 wait: float = DEFAULT_WAIT,
                 show: Callable[[str], object] | None = print) -> None:
        self.browser, self.wait, self.show = browser, wait, show
        self._listener: anyio.abc.SocketListener | None = None
        self.redirect_uri = ""

    async def prepare(self) -> str:
        if self._listener is None:
            listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
            self._listener = listeners.listeners[0]
            port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
            self.redirect_uri = f"http://127.0.0.1:{port}/callback"
        return self.redirect_uri

    async def receive(self, authorization_url: str) -> str:
        await self.prepare()
        assert self._listener is not None
        if not (self.browser and self.browser(authorization_url)) and self.show is not None:
            self.show(f"Authorize here: {authorization_url}")
        with anyio.move_on_after(self.wait):
            while True:
                async with await self._listener.accept() as stream:
                    target = await _request_target(stream)
                    if target is None or not target.startswith("/callback"):
                        await stream.send(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                                          b"Connection: close\r\n\r\n")
                        continue
                    page = b"<p>mcp_nb: authorized. You can close this tab.</p>"
                    await stream.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                      b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                                      % (len(page), page))
                    return self.redirect_uri.removesuffix("/callback") + target
        raise no_redirect_in_time(self.redirect_uri, self.wait)

    async def close(self) -> None:
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None


class Unattended:
    """No person is there to authorize: the browser step fails at once, saying what to do.

    A session keeps its token between cells; when the server refuses it later and no
    refresh token helps, the flow must not wait for a click nobody will make (nor ask
    for input from a cell that is not running). ``redirect_uri`` stays the one the
    client registered with; ``advice`` says how to authorize again.

    >>> Unattended("loopback", "http://127.0.0.1:1/callback", "connect again").name
    'loopback'
    """

    def __init__(self, name: str, redirect_uri: str, advice: str) -> None:
        self.name, self.redirect_uri, self.advice = name, redirect_uri, advice

    async def prepare(self) -> str:
        return self.redirect_uri

    async def receive(self, authorization_url: str) -> str:
        raise AuthorizationFailed(
            _("the server asks for a new authorization (the token was refused and no refresh "
              "token could renew it) and a person must approve it in a browser"),
            rule="the authorization code grant needs the person's approval",
            fix=self.advice)

    async def close(self) -> None:
        return None


async def _request_target(stream: anyio.abc.ByteStream) -> str | None:
    """The path and query of one HTTP/1.1 request line (the rest is ignored)."""
    data = b""
    with anyio.move_on_after(10):
        while b"\r\n" not in data and len(data) < 8192:
            chunk = await stream.receive()
            if not chunk:
                break
            data += chunk
    parts = data.split(b"\r\n", 1)[0].split(b" ")
    return parts[1].decode("latin-1") if len(parts) == 3 and parts[0] == b"GET" else None


def running_behind_jupyter_proxy() -> bool:
    """JupyterHub or Binder: the browser is not on the kernel's machine."""
    return any(name in os.environ for name in (
        "JUPYTERHUB_SERVICE_PREFIX", "BINDER_SERVICE_HOST", "BINDER_REQUEST"))


def choose_callback(mode: str | Callback | Callable[[str], str] = "auto", *,
                    link_shown_by_caller: bool = False) -> Callback:
    """The callback for ``mode``: ``"auto"``, ``"loopback"``, ``"paste"``, or your own.

    ``"auto"`` takes the Jupyter server's route when its public URL is known
    (``MCP_NB_JUPYTER_URL``, or JupyterHub's ``JUPYTERHUB_PUBLIC_URL`` when it is a whole
    URL: :func:`~mcp_nb.auth.jupyter.public_url_from_environment`), the loopback listener
    when the browser can be on this machine (a desktop session, not JupyterHub/Binder), and
    paste-back otherwise. A plain callable becomes :class:`Headless`.
    ``link_shown_by_caller``: the caller shows the authorization link where the person is (a
    notebook cell), so no callback prints it and no desktop browser is opened.

    >>> choose_callback(lambda url: url).name
    'headless'
    """
    if not isinstance(mode, str):
        if hasattr(mode, "receive") and hasattr(mode, "prepare"):
            return mode  # type: ignore[return-value]
        return Headless(mode)  # type: ignore[arg-type]
    if mode == "auto":
        desktop = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                       or os.name == "nt" or os.uname().sysname == "Darwin")
        if public_url_from_environment():
            mode = "jupyter"
        else:
            mode = "loopback" if desktop and not running_behind_jupyter_proxy() else "paste"
    show = None if link_shown_by_caller else print
    makers: dict[str, Callable[[], Callback]] = {
        "loopback": lambda: Loopback(browser=None if link_shown_by_caller else webbrowser.open,
                                     show=show),
        "paste": PasteBack, "auto-approved": AutoApproved,
        "jupyter": lambda: JupyterServerCallback(show=show)}
    try:
        return makers[mode]()
    except KeyError:
        raise ValueError(f"unknown callback mode {mode!r}; choose auto, loopback, paste, "
                         "jupyter, auto-approved, or pass a callable") from None
