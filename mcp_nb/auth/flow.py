"""The authorization flow as a generator of needs: sans-I/O, so it runs whole or step by step.

A :class:`Flow` yields :class:`HttpNeed` (send this request, give me the response) and
:class:`BrowserNeed` (have the user authorize at this URL, give me the redirect URL);
whoever drives it does the I/O. :func:`run` drives it to the end; ``Flow.advance``
one need at a time (one notebook cell per step). Every exchange is kept as a
:class:`~mcp_nb.auth.steps.Step`. The OAuth mechanics (PKCE, client authentication,
JWT assertions, the authorization response) come from authlib.

The parts: :class:`~mcp_nb.auth.trail.Trail` (the steps and the exchanges),
:class:`~mcp_nb.auth.metadata.MetadataDiscovery` (challenge and metadata),
:class:`~mcp_nb.auth.identity.ClientIdentity` (registration, client authentication) and
:class:`~mcp_nb.auth.grants.Grants` (the token requests); :class:`Flow` orders them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from .challenge import Challenge
from .dpop import decide_dpop
from .errors import AuthorizationFailed
from .flow_values import (
    AuthState,
    BrowserNeed,
    ClientSettings,
    EnterpriseIdentity,
    Grant,
    HttpNeed,
    Need,
    ServerMetadata,
)
from .grants import Grants
from .identity import ClientIdentity
from .metadata import MetadataDiscovery
from .steps import Step
from .tokens import Token
from .trail import Trail

#: The flow's values live in :mod:`.flow_values`; they are importable from here too.
__all__ = ["AuthState", "BrowserNeed", "ClientSettings", "EnterpriseIdentity", "Flow", "Grant",
           "HttpNeed", "Need", "ServerMetadata"]


class Flow:
    """One run of the authorization flow for the MCP server at ``server_url``.

    Example (driven by hand; :func:`run` does this loop)::

        flow = Flow(settings, state, "https://mcp.example/mcp", challenge, redirect_uri)
        need = flow.start()
        while not flow.done:
            need = flow.advance(reply_to(need))
        token = flow.token
    """

    def __init__(self, settings: ClientSettings, state: AuthState, server_url: str,
                 challenge: Challenge | None, redirect_uri: str, *, step_up: bool = False,
                 ask_server: bool = False,
                 on_step: Callable[[Step], object] | None = None) -> None:
        self.settings = settings
        self.state = state
        self.server_url = server_url
        self.challenge = challenge
        self.redirect_uri = redirect_uri
        self.step_up = step_up
        #: Start by asking the server itself for its challenge (a flow walked by hand).
        self.ask_server = ask_server
        #: Told of each step as it is recorded (a notebook shows the flow as it happens).
        self.trail = Trail(on_step)
        self.steps: list[Step] = self.trail.steps
        self.token: Token | None = None
        self.done = False
        self._discovery = MetadataDiscovery(self.trail, state, server_url)
        self._identity = ClientIdentity(self.trail, settings, state, redirect_uri)
        self._grants = Grants(self.trail, settings, state, redirect_uri, self._identity)
        self._generator = self._flow()
        self._asked: str | None = None  # the step of the last need, while it is answered

    # -- driving ---------------------------------------------------------------------------

    def start(self) -> Need | None:
        return self.advance(None)

    def advance(self, reply: Any) -> Need | None:
        """Give the reply to the last need; the next need, or ``None`` when done."""
        try:
            need = self._generator.send(reply)
        except StopIteration as stop:
            self.token, self.done = stop.value, True
            return None
        except AuthorizationFailed as failed:
            self.done = True
            if not (self.steps and self.steps[-1].outcome == "refused"):  # not noted yet
                # It belongs to the step whose answer was refused (the last need's).
                name = self._asked or (self.steps[-1].name if self.steps else "challenge")
                self.trail.note(name, "", "", failed.rule, "refused", failed.problem)
            raise
        self._asked = need.step
        return need

    # -- the flow ---------------------------------------------------------------------------

    def _flow(self) -> Generator[Need, Any, Token]:
        self.challenge = yield from self._discovery.challenge(self.challenge,
                                                              ask_server=self.ask_server)
        found = yield from self._discovery.resource(self.challenge)
        server = yield from self._discovery.server(found.issuer, legacy=found.legacy)
        resource = found.resource
        if self.state.issuer is not None and self.state.issuer != server.issuer:
            # The resource moved to another authorization server: nothing from the old
            # one (token, client id) may be shown to the new one (SEP-2352).
            self.state.token = None
        self.state.issuer, self.state.resource = server.issuer, resource
        scope = self._scope(server, found.scopes)
        held = self.state.token
        # Decided per flow, before any token request: the refresh, the grant and every
        # later request to the resource follow it (Grants reads it from the state).
        self.state.dpop_decision = decide_dpop(
            self.settings.dpop, issuer=server.issuer,
            server_algs=server.get("dpop_signing_alg_values_supported"),
            resource_algs=found.dpop_algs, resource_required=found.dpop_required,
            challenge_algs=self.challenge.dpop_algs if self.challenge else None,
            held_bound=held is not None and held.token_type.lower() == "dpop")
        if (held is not None and held.refresh_token and held.issuer == server.issuer
                and not self.step_up):
            refreshed = yield from self._grants.refresh(server, held, resource)
            if refreshed is not None:
                return refreshed
        if self.settings.grant != "authorization_code":
            return (yield from self._grants.client_credentials(server, resource, scope))
        registration = yield from self._identity.identify(server)
        return (yield from self._grants.authorization_code(server, registration, resource, scope))

    def _scope(self, server: ServerMetadata, resource_scopes: list[str] | None) -> str | None:
        """The MCP spec's scope selection, plus what was granted before and offline_access."""
        if self.settings.scopes is not None:
            chosen = list(self.settings.scopes)
        elif self.challenge is not None and self.challenge.scopes is not None:
            chosen = list(self.challenge.scopes)
        elif resource_scopes is not None:
            chosen = [str(s) for s in resource_scopes]
        else:
            chosen = []
        held = self.state.token
        if self.step_up and held is not None:
            # Re-authorizing for more must not lose what was granted (SEP-2350).
            chosen = list(dict.fromkeys([*held.scopes, *chosen]))
        supported = server.get("scopes_supported")
        if (chosen and self.settings.offline_access and self.settings.grant ==
                "authorization_code" and isinstance(supported, list)
                and "offline_access" in supported and "offline_access" not in chosen):
            chosen.append("offline_access")
        return " ".join(chosen) or None
