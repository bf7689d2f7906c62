"""What an HTTP exchange that went wrong means for the session: one request fails, or all end.

Most failures belong to one exchange: an error status, or a POST that broke,
fails the request it carried (a ``request failed`` event, which the session
turns into that request's error) and the session goes on.  Only a server that
cannot be reached at all ends the transport.  A refusal shows the server's own
words in the transcript, and a JSON-RPC message inside it is handed on like
any other.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from ..auth.errors import AuthorizationFailed
from ..i18n import _
from .base import TransportClosed
from .http_messages import Outgoing, excerpt, json_rpc_message, path_of
from .http_reading import EventReporter, ResponseReader


class ExchangeFailures:
    """Mixin of :class:`~.http_base.HttpTransportBase`: how it reports a failed exchange."""

    # The transport's own, defined by HttpTransportBase: where a failure is told.
    _reader: ResponseReader
    _event: EventReporter
    _deliver: Callable[[bytes], None]
    _fail: Callable[[TransportClosed], None]

    def _unreachable(self, method: str, url: str, exc: httpx.HTTPError) -> None:
        """The server cannot be reached at all: the transport ends."""
        if isinstance(exc, httpx.ConnectError):
            text = _("could not connect to {url}: {reason}").format(url=url, reason=exc)
        else:
            text = _("{method} {url} failed: {error}").format(
                method=method, url=url, error=f"{type(exc).__name__}: {exc}")
        self._event("http failed", text)
        error = TransportClosed(text)
        error.__cause__ = exc
        self._fail(error)

    def _post_failed(self, outgoing: Outgoing, url: str, exc: httpx.HTTPError) -> None:
        """A POST broke: unreachable ends the transport, anything else fails its request only."""
        if isinstance(exc, httpx.ConnectError) or outgoing.kind != "request":
            self._unreachable("POST", url, exc)
            return
        if isinstance(exc, AuthorizationFailed):  # a refusal, not a broken exchange
            self._request_failed(outgoing.id, _("authorization failed: {error}").format(
                error=exc))
            return
        self._request_failed(outgoing.id, _("POST {path} broke before the answer: {error}").format(
            path=path_of(url), error=f"{type(exc).__name__}: {exc}"))

    def _request_failed(self, request_id: str | int | None, detail: str, *,
                        status: int | None = None) -> None:
        """One request's exchange failed at the HTTP level: the session fails that request."""
        self._event("request failed", detail, request_id=request_id, cause="http-error",
                    status=status, limit=None, option=None, size=None)

    async def _refuse_stateless(self, outgoing: Outgoing, response: httpx.Response) -> None:
        """An error status for a stateless-era request: hand the server's answer on.

        A stateless server explains a 4xx with a JSON-RPC error (-32022, -32020,
        -32601 …), which the session judges like any answer.  A body that does
        not answer the request (an old server's plain 400, say) is reported as a
        ``request refused`` event for the session to fail that one request with:
        the era probe must see it as an answer, not as a broken connection.
        """
        body = await self._reader.body(response, outgoing) or b""
        status = f"{response.status_code} {response.reason_phrase}"
        self._event("rejected", f"{outgoing.label}: {status}: {excerpt(body) or '(empty body)'}",
                    status=response.status_code)
        message = json_rpc_message(body)
        if outgoing.is_answered_by(message):
            self._deliver(body)
            return
        error = message.get("error") if message is not None else None
        self._event("request refused", f"{outgoing.label} got no JSON-RPC answer ({status})",
                    id=outgoing.id, status=response.status_code,
                    error=error if isinstance(error, dict) else None, body=excerpt(body))

    async def _reject(self, outgoing: Outgoing, response: httpx.Response) -> None:
        """An error status: show the server's words, and fail a request left unanswered.

        The body is passed on when it is a JSON-RPC message (the spec lets a server
        explain a refusal with an error response that has no id), so the transcript
        shows what the server said.  A request whose refusal did not answer it
        fails at once, with the status; the session goes on.
        """
        body = await self._reader.body(response, None) or b""
        status = f"{response.status_code} {response.reason_phrase}"
        self._event("rejected", f"{outgoing.label}: {status}: {excerpt(body) or '(empty body)'}",
                    status=response.status_code)
        message = json_rpc_message(body)
        if message is not None:
            self._deliver(body)
        if outgoing.kind != "request" or outgoing.is_answered_by(message):
            return
        hint = ""
        if response.status_code == 401:
            hint = (" The server wants authorization: connect with an OAuth client, "
                    "auth=mcp_nb.auth.OAuth() (docs/authorization.md), or pass a token you "
                    "hold as headers={'Authorization': 'Bearer …'}.")
        elif response.status_code == 403:
            hint = " The server refused this client: check the credentials and the Origin."
        self._request_failed(outgoing.id, f"the server answered {outgoing.label} with HTTP "
                             f"{status}: {excerpt(body) or '(empty body)'}.{hint}",
                             status=response.status_code)
