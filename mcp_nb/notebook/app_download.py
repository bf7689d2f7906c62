"""``ui/download-file`` in the cell: the App's files are saved beside the notebook after a click.

The host's check is :mod:`mcp_nb.apps.download`; here the person decides. The cell shows what
the App asks to save (names, types, sizes, the URIs they came from) with *Save* and *Decline*;
nothing is written before *Save*. The App's request waits meanwhile (its answer is ``{}`` once
saved, ``-32000`` "Download denied by user" when declined), and the transcript's App lane says
which it was and where the files went.

*Beside the notebook* is the folder of the notebook the kernel was started for
(``JPY_SESSION_NAME``, which Jupyter Server sets for a notebook's kernel), else the kernel's
working folder. A name that is taken gets `` (1)``, `` (2)`` …: nothing is overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import ipywidgets as w

from ..apps.download import DownloadFile
from ..i18n import _
from . import render

DECLINED = "Download denied by user"


def notebook_folder() -> Path:
    """Where the notebook this kernel serves lies (the kernel's working folder otherwise)."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session and os.path.isabs(session) and Path(session).parent.is_dir():
        return Path(session).parent
    return Path.cwd()


def _free_path(folder: Path, name: str) -> tuple[Path, int]:
    """An open, new file for ``name`` in ``folder`` (``name (1).ext`` … if it is taken)."""
    stem, dot, suffix = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    for attempt in range(1000):
        candidate = name if attempt == 0 else f"{stem} ({attempt}){dot}{suffix}"
        path = folder / candidate
        try:
            # O_EXCL: never an existing file; O_NOFOLLOW: never through a planted symlink.
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                 | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            continue
    raise FileExistsError(name)


def save_files(files: Sequence[DownloadFile], folder: Path) -> list[Path]:
    """Write each file into ``folder`` (never outside it, never over another file)."""
    saved = []
    for file in files:
        path, descriptor = _free_path(folder, file.name)
        assert path.parent == folder  # safe_name gives a name, never a path
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(file.data)
        saved.append(path)
    return saved


class DownloadPrompt(w.VBox):
    """What the App asks to save, and the person's *Save* / *Decline*.

    ``answer(saved=…)`` or ``answer(refused=…)`` tells the host (it answers the App);
    ``folder`` is where *Save* writes.
    """

    def __init__(self, app_name: str, files: Sequence[DownloadFile],
                 answer: Callable[..., None], folder: Path | None = None) -> None:
        super().__init__()
        self.files = list(files)
        self.answer = answer
        self.folder = folder or notebook_folder()
        self.saved: list[Path] = []
        rows = "".join(
            f"<li><code>{render.esc(f.name)}</code> · {render.esc(f.mime_type or '?')} · "
            f"{len(f.data):,} B <small>({render.esc(f.uri)})</small></li>" for f in self.files)
        self.text = w.HTML(render.STYLE + '<div class="mcpnb">' + render.esc(_(
            "The App {app} asks to save {count} file(s) into the notebook's folder {folder}:"
        ).format(app=app_name, count=len(self.files), folder=str(self.folder)))
            + f"<ul>{rows}</ul></div>")
        self.save_button = w.Button(description=_("Save"), button_style="primary")
        self.decline_button = w.Button(description=_("Decline"))
        self.outcome = w.HTML()
        self.save_button.on_click(lambda button: self.save())
        self.decline_button.on_click(lambda button: self.decline())
        self.children = [self.text, w.HBox([self.save_button, self.decline_button]),
                         self.outcome]

    def _done(self, said: str) -> None:
        self.save_button.disabled = self.decline_button.disabled = True
        self.outcome.value = render.STYLE + f'<div class="mcpnb">{render.esc(said)}</div>'

    def save(self) -> None:
        if self.save_button.disabled:
            return
        try:
            self.saved = save_files(self.files, self.folder)
        except OSError as exc:
            self._done(_("not saved: {error}").format(error=exc))
            self.answer(refused=f"Download failed: {type(exc).__name__}")
            return
        names = ", ".join(path.name for path in self.saved)
        self._done(_("saved beside the notebook: {names}").format(names=names))
        self.answer(saved=f"saved {names} ({sum(len(f.data) for f in self.files)} bytes) in "
                          f"{self.folder}, after the person agreed")

    def decline(self) -> None:
        if self.decline_button.disabled:
            return
        self._done(_("declined: nothing was saved"))
        self.answer(refused=DECLINED)

    def withdraw(self) -> None:
        """The App went away before the person decided: nothing can be answered any more."""
        if not self.save_button.disabled:
            self._done(_("the App is gone: nothing was saved"))
