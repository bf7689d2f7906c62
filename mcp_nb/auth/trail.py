"""The flow's record and its I/O: each exchange yielded as a need, each outcome kept as a step."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any
from urllib.parse import urljoin

import httpx

from ..i18n import _
from . import discovery
from .errors import AuthorizationFailed
from .flow_values import HttpNeed, Need
from .steps import Outcome, Step, shown_response, shown_url

#: Same-origin redirects followed while fetching metadata; another origin is refused.
MAX_REDIRECTS = 3


class Trail:
    """The steps of one flow so far, and the exchanges that make them.

    ``last_sent`` is how the last request is shown in its step (secrets redacted).
    """

    def __init__(self, on_step: Callable[[Step], object] | None = None) -> None:
        #: Told of each step as it is recorded (a notebook shows the flow as it happens).
        self.on_step = on_step
        self.steps: list[Step] = []
        self.last_sent = ""

    def note(self, name: str, sent: str, received: str, rule: str, outcome: Outcome,
             detail: str = "") -> None:
        step = Step(name, sent, received, rule, outcome, detail)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def exchange(self, name: str, request: httpx.Request, sent: str | None = None
                 ) -> Generator[Need, Any, httpx.Response]:
        response: httpx.Response = yield HttpNeed(request, name)
        self.last_sent = sent or f"{request.method} {shown_url(request.url)}"
        return response

    def get_json(self, name: str, url: str, what: str
                 ) -> Generator[Need, Any, tuple[httpx.Response, dict[str, Any] | None]]:
        """GET a metadata document (same-origin redirects followed); ``None`` on a 4xx."""
        discovery.require_secure(url, what)
        for _attempt in range(MAX_REDIRECTS + 1):
            request = httpx.Request("GET", url, headers={"Accept": "application/json"})
            response = yield from self.exchange(name, request)
            if not response.is_redirect:
                break
            target = urljoin(url, response.headers.get("location", ""))
            if discovery.origin(target) != discovery.origin(url):
                raise AuthorizationFailed(
                    _("the {what} at {url} redirects to another origin ({target})").format(
                        what=what, url=url, target=target),
                    rule="a client follows no redirect to another origin while discovering "
                         "(RFC 9728 §3, RFC 8414 §3)",
                    fix=_("publish the metadata on its own URL"))
            self.note(name, self.last_sent, shown_response(response), "same-origin redirect",
                       "fallback")
            url = target
        else:
            raise AuthorizationFailed(
                _("the {what} at {url} redirects more than {limit} times").format(
                    what=what, url=url, limit=MAX_REDIRECTS),
                rule="bounded redirects")
        if response.status_code >= 400 or response.is_redirect:
            return response, None
        return response, discovery.json_document(
            response.content, response.headers.get("content-type", ""), what, url)
