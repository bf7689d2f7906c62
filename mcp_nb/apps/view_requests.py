"""The View's requests that end in the host itself (nothing reaches the MCP server):
``ui/open-link``, ``ui/message``, ``ui/update-model-context``, ``ui/request-display-mode``
and ``ui/download-file``, with the person's agreement to fullscreen and to a download.

A mixin of :class:`~mcp_nb.apps.host.AppHost`, kept apart so the host's message routing
and lifecycle read on their own; these are the requests where the host decides what the
person sees (a link to click, a message shown in the cell, the App over the whole page).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..i18n import _
from .actions import Action, Show, ToFrame
from .actions import error_message as _error
from .actions import notification_message as _notification
from .actions import result_message as _result
from .download import DownloadFile, check_request
from .lifecycle import AppLifecycle, AppState

#: The code of a refusal (link denied, message refused, teardown error): -32000 is what the
#: spec's own examples use for implementation-defined errors.
REFUSED = -32000
#: Display modes this host can give a View: in the cell, or over the whole page.
HOST_DISPLAY_MODES = ("inline", "fullscreen")
#: Link schemes ``ui/open-link`` may offer (no javascript:, data:, file: …).
LINK_SCHEMES = frozenset({"http", "https", "mailto"})


class ViewRequests:
    """Mixin: the host's answers to the View's requests it handles itself."""

    app_capabilities: dict[str, Any]
    context: Any
    fullscreen_agreed: bool
    lifecycle: AppLifecycle
    messages: list[Any]
    model_context: Any
    state: AppState
    _downloads: dict[str | int, list[DownloadFile]]

    def _send(self, message: dict[str, Any], note: str = "") -> ToFrame:  # pragma: no cover
        raise NotImplementedError

    def _refuse(self, request_id: Any, code: int, why: str,
                method: str) -> list[Action]:  # pragma: no cover - AppHost provides it
        raise NotImplementedError

    def _open_link(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        url = params.get("url")
        scheme = urlsplit(url).scheme.lower() if isinstance(url, str) else ""
        if scheme not in LINK_SCHEMES:
            return self._refuse(request_id, REFUSED, _(
                "Invalid URL: {url} (this host offers only {schemes} links)").format(
                url=repr(url), schemes=", ".join(sorted(LINK_SCHEMES))), "ui/open-link")
        return [self._send(_result(request_id, {}), "shown as a link; opened on click"),
                Show("open-link", {"url": url})]

    def _message(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        content = params.get("content")
        blocks = content if isinstance(content, list) else [content]
        if not blocks or not all(isinstance(b, Mapping) and isinstance(b.get("type"), str)
                                 for b in blocks):
            return self._refuse(request_id, REFUSED, _("Invalid message format: content is "
                                                       "not content blocks"), "ui/message")
        self.messages.append(params)
        return [self._send(_result(request_id, {}), "no conversation here: shown in the cell"),
                Show("message", {"role": params.get("role"), "content": blocks})]

    def _model_context(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        self.model_context = params
        return [self._send(_result(request_id, {}), "no model here: shown in the cell"),
                Show("model-context", params)]

    def _display_mode(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        mode = params.get("mode")
        declared = self.app_capabilities.get("availableDisplayModes")
        allowed = mode in HOST_DISPLAY_MODES and (
            not isinstance(declared, list) or mode in declared)
        actions: list[Action] = []
        if allowed and mode == "fullscreen" != self.context.display_mode \
                and not self.fullscreen_agreed:  # the person agrees first (grant_fullscreen)
            return [self._send(_result(request_id, {"mode": self.context.display_mode}),
                               "fullscreen waits for the person's click in the cell"),
                    Show("ask-fullscreen", {})]
        if allowed and mode != self.context.display_mode:
            self.context.display_mode = mode
            actions.append(Show("display-mode", {"mode": mode}))
        note = "" if allowed else f"{mode!r} not available: the current mode is kept"
        actions.insert(0, self._send(_result(request_id, {"mode": self.context.display_mode}),
                                     note))
        if allowed and actions[1:]:
            actions.append(self._send(_notification("ui/notifications/host-context-changed",
                                                    {"displayMode": mode})))
        return actions

    def grant_fullscreen(self) -> list[Action]:
        """The person agreed (a click in the cell): fullscreen now, and on later requests.
        An App over the whole page could pass for the notebook (a fake login form)."""
        self.fullscreen_agreed = True
        if not self.lifecycle.addressable or self.context.display_mode == "fullscreen":
            return []
        self.context.display_mode = "fullscreen"
        return [Show("display-mode", {"mode": "fullscreen"}), self._send(_notification(
            "ui/notifications/host-context-changed", {"displayMode": "fullscreen"}))]

    def _download_file(self, request_id: str | int, params: dict[str, Any]) -> list[Action]:
        """Draft: the answer waits for the person (:meth:`download_answered`)."""
        files = check_request(params)
        if isinstance(files, str):
            return self._refuse(request_id, REFUSED, files, "ui/download-file")
        self._downloads[request_id] = files
        return [Show("download", {"id": request_id, "files": files})]

    def download_answered(self, request_id: str | int, *, saved: str | None = None,
                          refused: str | None = None) -> list[Action]:
        """The person saved (``saved`` says where) or declined (``refused`` says why)."""
        if self._downloads.pop(request_id, None) is None or self.state is AppState.TORN_DOWN:
            return []
        if refused is not None:
            return [self._send(_error(request_id, REFUSED, refused), "ui/download-file refused")]
        return [self._send(_result(request_id, {}), f"ui/download-file: {saved}")]
