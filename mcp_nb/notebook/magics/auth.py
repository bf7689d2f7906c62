"""``%mcp auth`` and ``%mcp connect URL --auth``: OAuth for HTTP servers, never showing a token.

The work is :mod:`mcp_nb.auth`'s; this module turns magic lines into
:class:`~mcp_nb.auth.OAuth` settings, runs the flow from the cell that connects
(with a live view: :class:`~mcp_nb.notebook.auth_view.AuthFlowView`), shows the
state (resource, issuer, client, scopes, expiry — never the token) and walks the
flow one step per cell.

Why the cell drives the flow: the flow is a generator of needs, so the HTTP needs
are answered on the background loop while the browser need is met here, on the
cell's own thread — where ``input()`` reaches the frontend's stdin box (paste-back)
and an interrupt reaches the wait. Between cells nobody is there to click: a later
``401`` that no refresh token can answer fails at once, saying how to authorize again.

Example::

    %mcp connect https://mcp.example.com/mcp --auth            # the flow runs when asked
    %mcp connect URL --auth --auth-callback paste --scope mcp:tools
    %mcp connect URL --auth --auth-callback {approve}   # your function: URL → redirect URL
    %mcp connect URL --auth --dpop off                  # never DPoP (default auto)
    %mcp auth                       # the current session's state (tokens redacted)
    %mcp auth --steps               # the last flow, one row per step (redacted)
    %mcp auth --logout              # forget the token and the client registration
    %mcp auth --step URL --auth-callback auto-approved   # one step per cell:
    %mcp auth --next                #   … each cell makes one exchange and shows it
    %mcp auth --next REDIRECT_URL   #   the browser step: paste where the browser landed
"""

from __future__ import annotations

import argparse
import contextlib
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...auth import (
    AuthorizationFailed,
    BrowserNeed,
    Callback,
    Flow,
    HttpNeed,
    OAuth,
    PasteBack,
    Unattended,
    bearer_challenge,
    choose_callback,
)
from ...auth.steps import shown_url
from ...i18n import N_, _
from ..auth_view import AuthFlowView, steps_record_html, steps_summary
from .displays import Listing
from .table import CommandGroup, McpCellError, Parser

if TYPE_CHECKING:
    from ..hosted import HostedSession
    from .magic import McpMagics

GROUP = CommandGroup()
CALLBACKS = ("auto", "loopback", "paste", "jupyter", "auto-approved")
#: ``--dpop`` → ``OAuth(dpop=…)``.
DPOP_CHOICES: dict[str, Any] = {"auto": "auto", "on": True, "off": False}
#: The arguments where ``{expr}`` is the notebook's object itself (a callable callback).
AUTH_OBJECTS = ("auth_callback",)


def _oauth_arguments(p: Parser) -> None:
    """The OAuth client's settings, which ``%mcp connect --auth`` and ``%mcp auth --step`` take."""
    p.add_argument("--auth-callback", metavar="MODE",
                   help=N_("how the code comes back: loopback (a browser on this machine), "
                           "paste (anywhere), jupyter (via this Jupyter server: Binder, "
                           "JupyterHub), auto-approved (the lab's server), or {fn}: a Python "
                           "callable from the notebook that takes the authorization URL and "
                           "returns the URL the browser was redirected to; default auto"))
    p.add_argument("--client-id", help=N_("a pre-registered client id (else CIMD or registration)"))
    p.add_argument("--client-metadata-url", metavar="URL",
                   help=N_("where this client's Client ID Metadata Document is published: that URL "
                           "is the client id when the authorization server supports CIMD (else "
                           "dynamic registration)"))
    p.add_argument("--client-secret", help=N_("its secret (use {variable}: never type one in)"))
    p.add_argument("--scope", action="append", default=[], metavar="SCOPE",
                   help=N_("ask for this scope (repeat; default: what the server says)"))
    p.add_argument("--dpop", choices=tuple(DPOP_CHOICES),
                   help=N_("bind tokens to a key of this client's own (DPoP, RFC 9449): auto "
                           "(when the server's resource metadata or challenge asks for it and "
                           "its authorization server supports it; default), on (always), off "
                           "(never)"))


def add_auth_arguments(p: Parser) -> None:
    """``%mcp connect``'s ``--auth`` and its settings (HTTP servers only)."""
    p.add_argument("--auth", action="store_true",
                   help=N_("authorize with OAuth 2.1 when the server asks (401): discovery, "
                           "registration, PKCE, token; see docs/authorization.md"))
    _oauth_arguments(p)


def oauth_settings(mcp: McpMagics, args: argparse.Namespace,
                   entry: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """The callback asked for (``None``: none) and the other ``OAuth`` keyword arguments.

    From the magic line and an mcpServers entry's ``"auth"`` (the line wins). A callable
    (``--auth-callback {approve}``, or ``"callback": approve`` in a dict given as
    ``--config {servers}``) becomes :class:`~mcp_nb.auth.Headless`.
    """
    settings = dict((entry or {}).get("auth") or {})
    if args.auth_callback is not None:
        callback = _callback(args.auth_callback, "--auth-callback", mcp.namespace)
    else:
        callback = _callback(settings.get("callback"), 'the entry\'s "auth" "callback"')
    dpop = DPOP_CHOICES[args.dpop] if args.dpop else settings.get("dpop", "auto")
    if dpop != "auto" and not isinstance(dpop, bool):
        raise McpCellError(f'the entry\'s "auth" "dpop" {dpop!r}: write "auto" (DPoP when the '
                           "resource asks for it), true (always) or false (never)")
    return callback, {"client_id": args.client_id or settings.get("client_id"),
                      "client_metadata_url": (args.client_metadata_url
                                              or settings.get("client_metadata_url")),
                      "client_secret": args.client_secret or settings.get("client_secret"),
                      "scopes": list(args.scope) or settings.get("scopes") or None,
                      "dpop": dpop}


def _callback(value: object, where: str, namespace: Mapping[str, Any] | None = None
              ) -> str | Callback | Callable[[str], Any] | None:
    """A callback mode's name, a :class:`Callback`, or a callable; refuse anything else.

    ``namespace``: a bare name is also looked up there (as ``--sampling NAME`` is).
    """
    if value is None or (isinstance(value, str) and value in CALLBACKS):
        return value  # type: ignore[return-value]
    if isinstance(value, str) and namespace is not None and callable(namespace.get(value)):
        return namespace[value]  # type: ignore[no-any-return]
    if callable(value) or (hasattr(value, "prepare") and hasattr(value, "receive")):
        return value  # type: ignore[return-value]
    raise McpCellError(_(
        "{where} {value} is neither a callback mode ({modes}) nor a Python callable: the "
        "browser step needs a mode, or a function that takes the authorization URL and returns "
        "the URL the browser was redirected to (define it, then --auth-callback {example})"
    ).format(where=where, value=repr(value), modes=", ".join(CALLBACKS), example="{fn}"))


def oauth_for(mcp: McpMagics, args: argparse.Namespace, url: str,
              entry: Mapping[str, Any] | None = None) -> OAuth | None:
    """The OAuth for ``connect`` (``--auth`` or an mcpServers entry's ``"auth"``), or None.

    A flow walked with ``%mcp auth --step`` for the same URL is reused (its token too);
    otherwise the flow runs here, in the cell, when the server asks for authorization.
    """
    if not (getattr(args, "auth", False) or (entry or {}).get("auth")):
        return None
    walked = _walks(mcp).get(url)
    if walked is not None:
        return walked.auth
    callback, settings = oauth_settings(mcp, args, entry)
    oauth = OAuth(**settings, callback=choose_callback(callback or "auto",
                                                       link_shown_by_caller=True))
    # A refused flow leaves no session behind: its steps stay readable by the name asked
    # for (%mcp auth --steps NAME) and by the URL.
    for key in (args.name, url):
        if key:
            _flows(mcp)[key] = oauth
    authorize_in_cell(mcp, oauth, url)
    return oauth


#: Callbacks that need a person at the browser (AutoApproved and Headless do not).
PERSON_CALLBACKS = ("loopback", "paste-back", "jupyter-server")


def authorize_in_cell(mcp: McpMagics, oauth: OAuth, url: str) -> None:
    """Run ``oauth``'s flow for ``url`` from this cell, with a live view; hold the token.

    Nothing happens when a token is held or the server does not ask for one. A
    refusal (or an interrupt) ends the cell with the rule that refused.
    """
    if oauth.held() is not None:
        return
    flow = mcp.loop.run(oauth.begin(url, ask_server=True))
    callback = oauth.callback
    assert callback is not None
    try:
        probe = flow.start()
        assert isinstance(probe, HttpNeed)
        try:
            answer = mcp.loop.run(oauth.exchange(probe))
        except AuthorizationFailed as failed:
            raise McpCellError(str(failed)) from None
        if bearer_challenge(answer) is None:
            return  # not a protected server (or not now): connect as usual
        view = AuthFlowView(url, callback.name, getattr(callback, "redirect_uri", ""))
        flow.trail.on_step = view.add_step
        if mcp.show_widgets:
            view.show()
        try:
            _drive(mcp, oauth, flow, flow.advance(answer), view)
            assert flow.token is not None
            oauth.hold(flow.token)
            view.finish(_("authorized: token held (scope {scope}; never shown)").format(
                scope=flow.token.scope or _("none")))
        except AuthorizationFailed as failed:
            view.finish(_("refused: {rule}").format(rule=failed.rule))
            raise McpCellError(_("authorization refused: {reason}").format(
                reason=failed)) from None
        except (KeyboardInterrupt, McpCellError) as stopped:
            view.finish(_("stopped: {why}").format(why=_("interrupted") if isinstance(
                stopped, KeyboardInterrupt) else str(stopped)))
            raise
        finally:
            if mcp.show_widgets:
                view.settle()
    finally:
        with contextlib.suppress(Exception):
            mcp.loop.run(callback.close())  # a loopback listener lives for one flow
    if callback.name in PERSON_CALLBACKS:
        oauth.callback = _unattended(callback, url)


def _drive(mcp: McpMagics, oauth: OAuth, flow: Flow, need: HttpNeed | BrowserNeed | None,
           view: AuthFlowView) -> None:
    """Answer the flow's needs until it ends: HTTP on the loop, the browser step here."""
    while need is not None:
        if isinstance(need, BrowserNeed):
            reply: Any = _browser_step(mcp, oauth, need, view)
        else:
            reply = mcp.loop.run(oauth.exchange(need))
        need = flow.advance(reply)


def _browser_step(mcp: McpMagics, oauth: OAuth, need: BrowserNeed, view: AuthFlowView) -> str:
    """Show the link; get the redirect back: pasted here, or from the callback."""
    callback = oauth.callback
    assert callback is not None
    if callback.name not in PERSON_CALLBACKS:
        return mcp.loop.run(callback.receive(need.authorization_url))  # no person needed
    view.ask(need.authorization_url)
    if callback.name != "paste-back":
        return mcp.loop.run(callback.receive(need.authorization_url))
    from IPython.core.error import StdinNotImplementedError

    try:
        pasted = input("Paste the address your browser landed on: ").strip()
    except StdinNotImplementedError:
        raise McpCellError(_(
            "this frontend cannot take input: walk the flow with %mcp auth --step URL "
            "--auth-callback paste, then %mcp auth --next REDIRECT_URL")) from None
    if not pasted:
        raise McpCellError(_("nothing was pasted: run the cell again and paste the address "
                             "your browser landed on"))
    return pasted


def _unattended(callback: Callback, url: str) -> Unattended:
    """What answers a later browser step, when no cell is waiting for a person."""
    return Unattended(callback.name, getattr(callback, "redirect_uri", ""),
                      f"authorize again from a cell: %mcp connect {url} --auth")


def oauth_of(hosted: HostedSession) -> OAuth | None:
    """The OAuth a session's HTTP transport carries, if any."""
    auth = hosted.session.transport.auth
    return auth if isinstance(auth, OAuth) else None


class AuthState(Listing):
    """``%mcp auth``: one row per fact; tokens appear only as «redacted»."""

    def __init__(self, auth: OAuth) -> None:
        facts = auth.describe()
        expires = facts.get("expires_at")
        if isinstance(expires, float):
            facts["expires_at"] = f"in {max(0, round(expires - time.time()))} s"
        rows = [(name, "" if value is None else str(value)) for name, value in facts.items()]
        super().__init__("facts", ("", "value"), rows, rows)

    def __repr__(self) -> str:
        return "\n".join(f"{name}: {value}" for name, value in self.rows)


def steps_listing(steps: list[Any]) -> Listing:
    rows = [(s.name, s.sent, s.received, s.rule, s.outcome, s.detail) for s in steps]
    return StepsListing("steps", ("step", "sent", "received", "rule", "outcome", "detail"),
                        rows, list(steps))


class StepsListing(Listing):
    """``%mcp auth --steps``: one line per step; the flow's sequence diagram and table."""

    def __repr__(self) -> str:
        return "\n".join(step.line() for step in self)

    def _repr_html_(self) -> str:
        return steps_record_html(list(self), steps_summary(list(self)))


@dataclass
class Walk:
    """A flow walked one cell at a time: the OAuth, the flow, the need waiting to be met."""

    auth: OAuth
    flow: Flow
    need: HttpNeed | BrowserNeed | None
    shown: int = 0
    log: list[str] = field(default_factory=list)


_WALKS: weakref.WeakKeyDictionary[Any, dict[str, Walk]] = weakref.WeakKeyDictionary()


def _walks(mcp: McpMagics) -> dict[str, Walk]:
    return _WALKS.setdefault(mcp, {})


_FLOWS: weakref.WeakKeyDictionary[Any, dict[str, OAuth]] = weakref.WeakKeyDictionary()


def _flows(mcp: McpMagics) -> dict[str, OAuth]:
    """The OAuth of each ``connect --auth``, by the session name asked for and by URL."""
    return _FLOWS.setdefault(mcp, {})


def _auth_arguments(p: Parser) -> None:
    p.add_argument("name", nargs="?", help=N_("which session (default: the current one)"))
    p.add_argument("--logout", action="store_true", help=N_("forget the token and registration"))
    p.add_argument("--steps", action="store_true",
                   help=N_("the last flow's steps: sent, received, rule, outcome (redacted)"))
    p.add_argument("--step", metavar="URL", help=N_("start walking the flow for URL, one "
                      "exchange per cell (then %%mcp auth --next)"))
    p.add_argument("--next", nargs="?", const="", default=None, metavar="REDIRECT_URL",
                   help=N_("make the next exchange of the walked flow (at the browser step: "
                           "the address the browser landed on)"))
    _oauth_arguments(p)


@GROUP.command("auth", N_("OAuth state (never the token), --steps, --logout, or --step URL / "
                  "--next"),
               arguments=_auth_arguments,
               expand=("client_secret", "client_id", "client_metadata_url", "step"),
               objects=AUTH_OBJECTS)
def auth(mcp: McpMagics, args: argparse.Namespace) -> Any:
    if args.step:
        return _start_walk(mcp, args)
    if args.next is not None:
        return _advance_walk(mcp, args.next)
    if args.steps and args.name and args.name not in mcp.sessions and (
            args.name in _flows(mcp)):
        return steps_listing(_flows(mcp)[args.name].steps)  # a connect that was refused
    hosted = mcp.session(args.name)
    oauth = oauth_of(hosted)
    if oauth is None:
        raise McpCellError(_("session {name} has no OAuth: connect with %mcp connect URL "
                             "--auth").format(name=repr(hosted.name)))
    if args.logout:
        oauth.logout()
        print(_("logged out: token and client registration forgotten"))
    if args.steps:
        return steps_listing(oauth.steps)
    return AuthState(oauth)


def _start_walk(mcp: McpMagics, args: argparse.Namespace) -> Any:
    url = str(args.step)
    if not url.startswith(("http://", "https://")):
        raise McpCellError(_("--step takes the server's URL, not {url}").format(url=repr(url)))
    callback, settings = oauth_settings(mcp, args)
    if callback in (None, "paste"):
        callback = PasteBack(show=print, ask=_no_input)
    oauth = OAuth(**settings, callback=callback)
    flow = mcp.loop.run(oauth.begin(url, ask_server=True))
    walk = Walk(oauth, flow, flow.start())
    _walks(mcp)[url] = walk
    print(_("walking the authorization flow for {url}: run %mcp auth --next for each "
            "step").format(url=url))
    return _next_preview(walk)


def _no_input(prompt: str) -> str:
    raise McpCellError(_("paste the address with %mcp auth --next REDIRECT_URL"))


def _current_walk(mcp: McpMagics) -> Walk:
    walks = [w for w in _walks(mcp).values() if not w.flow.done]
    if not walks:
        raise McpCellError(_("no flow being walked: start one with %mcp auth --step URL"))
    return walks[-1]


def _advance_walk(mcp: McpMagics, pasted: str) -> Any:
    walk = _current_walk(mcp)
    need = walk.need
    assert need is not None

    async def meet() -> Any:
        if isinstance(need, BrowserNeed):
            if pasted:
                return pasted
            assert walk.auth.callback is not None
            return await walk.auth.callback.receive(need.authorization_url)
        return await walk.auth.exchange(need)

    try:
        reply = mcp.loop.run(meet())
        walk.need = walk.flow.advance(reply)
    except AuthorizationFailed as failed:
        raise McpCellError(_("refused: {rule}").format(rule=failed)) from None
    except McpCellError:
        raise
    new = walk.flow.steps[walk.shown:]
    walk.shown = len(walk.flow.steps)
    if walk.flow.done:
        assert walk.flow.token is not None
        walk.auth.hold(walk.flow.token)
        print(_("token held ({token}); %mcp connect URL --auth uses it").format(
            token=repr(walk.flow.token)))
    else:
        print(_next_preview(walk))
    return steps_listing(new)


def _next_preview(walk: Walk) -> str:
    need = walk.need
    if isinstance(need, HttpNeed):
        return _("next: {step}: {request}").format(
            step=need.step, request=f"{need.request.method} {shown_url(need.request.url)}")
    if isinstance(need, BrowserNeed):
        return _("next: authorize in the browser: {url}\n(then %mcp auth --next, or paste "
                 "where the browser landed: %mcp auth --next REDIRECT_URL)").format(
            url=need.authorization_url)
    return _("done")
