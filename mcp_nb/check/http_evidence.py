"""One raw HTTP exchange of the checkup, as an answer to read and as evidence to show.

The Streamable HTTP probes (:mod:`mcp_nb.check.http_rules`) and the authorization
metadata reads (:mod:`mcp_nb.check.auth_rules`) both speak HTTP themselves and
both keep what they saw in the same evidence shape
(``{"http": {"request": …, "response": …}}``), so that shape lives here, below
both of them, rather than in one that the other would have to import.

Example::

    >>> import httpx
    >>> evidence = http_evidence("GET", "http://127.0.0.1:8000/mcp", {}, None, 405,
    ...                          httpx.Headers({"allow": "POST", "content-type": "text/plain"}),
    ...                          "no")
    >>> evidence["http"]["response"]
    {'status': 405, 'headers': {'content-type': 'text/plain'}, 'body': 'no'}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

#: The response headers an exchange's evidence keeps (the ones a rule is ever about).
SHOWN_HEADERS = ("content-type", "mcp-session-id", "www-authenticate", "location")


@dataclass
class Answer:
    """One HTTP exchange: what came back, and the exchange as evidence."""

    status: int
    headers: httpx.Headers
    #: The JSON-RPC message answering the request (from JSON or from the SSE stream).
    body: Any
    text: str
    evidence: dict[str, Any]
    #: The SSE ``id:`` fields, in order (empty for a JSON answer).
    event_ids: list[str] = field(default_factory=list)
    #: Every JSON-RPC message an SSE answer carried.
    messages: list[Any] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def result(self) -> dict[str, Any] | None:
        """The JSON-RPC result object answering the request, if one came."""
        result = self.body.get("result") if isinstance(self.body, dict) else None
        return result if isinstance(result, dict) else None

    @property
    def error_code(self) -> Any:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("code") if isinstance(error, dict) else None


def http_evidence(method: str, url: str, headers: dict[str, str], body: Any, status: int,
                  response_headers: httpx.Headers, text: str) -> dict[str, Any]:
    return {"http": {
        "request": {"method": method, "url": url, "headers": headers, "body": body},
        "response": {"status": status,
                     "headers": {k: v for k, v in response_headers.items()
                                 if k in SHOWN_HEADERS},
                     "body": text[:2000]}}}
