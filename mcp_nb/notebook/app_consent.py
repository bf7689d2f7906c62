"""What the person agrees to for one hosted App: its declared permissions, fullscreen, and
each file it offers to download.

The host asks with buttons drawn outside the App's frame, so an App cannot click them for
the person; nothing is granted before the click.  A mixin of
:class:`~mcp_nb.notebook.app_host.AppHosting`, which carries the messages.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ..apps.actions import Action
from ..apps.host import AppHost
from ..i18n import _
from .app_download import DownloadPrompt


class AppConsent:
    """Mixin: the person's agreements, carried out in the host."""

    host: AppHost | None
    frame: Any
    tool_name: str
    download_prompts: list[DownloadPrompt]
    _lock: threading.RLock

    def _host(self) -> AppHost:  # pragma: no cover - AppHosting provides it
        raise NotImplementedError

    def _apply(self, actions: list[Action]) -> None:  # pragma: no cover - AppHosting's
        raise NotImplementedError

    def _restart(self, why: str | None = None, *,
                 permissions: bool = False) -> None:  # pragma: no cover - AppHosting's
        raise NotImplementedError

    def grant_permissions(self) -> None:
        """The person allowed the declared permissions: the frame gets its ``allow`` and the
        App starts again (a frame's permissions are fixed when its document loads)."""
        host = self._host()
        if host.permissions_agreed or not host.policy.allow:
            return
        with self._lock:
            self._restart(_("you allowed {features} for this App: it starts again with "
                            "them").format(features=host.policy.allow), permissions=True)
            assert self.host is not None
            self._apply(self.host.frame_created())
            if self.frame is not None:
                self.frame.allow = host.policy.allow  # the page reloads the proxy with it

    def grant_fullscreen(self) -> None:
        """The person agreed to show the App over the whole page."""
        with self._lock:
            self._apply(self._host().grant_fullscreen())

    def _offer_download(self, data: Mapping[str, Any]) -> None:
        """ui/download-file: the files wait in the cell for the person's Save or Decline."""
        request_id = data["id"]

        def answer(**outcome: Any) -> None:
            if self.host is not None:
                with self._lock:
                    self._apply(self.host.download_answered(request_id, **outcome))

        prompt = DownloadPrompt(self.tool_name, data["files"], answer)
        self.download_prompts.append(prompt)
        self._show_download(prompt)

    def _show_download(self, prompt: DownloadPrompt) -> None:
        """Put the prompt in the cell (the drawing class may place it elsewhere)."""
        if hasattr(self, "children"):
            self.children = (*self.children, prompt)  # type: ignore[attr-defined]
