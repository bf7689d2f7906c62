"""``ui/download-file`` (MCP Apps draft) and ``hostContext.styles`` on the kernel's side.

The request's check and the file names are sans I/O (:mod:`mcp_nb.apps.download`); the save
is driven through the magics against the lab's App, as the browser would send the App's
messages: nothing is written before the person's *Save*, the file lands beside the notebook
under a sanitized name, never over another file, and the App's answer and the transcript say
what happened. The browser side is in ``test_apps_host_rows_browser.py``.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from apps_support import frame_says as _frame

from mcp_nb.apps.download import MAX_BYTES, check_request, safe_name
from mcp_nb.apps.styles import JUPYTERLAB_SOURCES, STYLE_KEYS, host_styles
from mcp_nb.notebook.app_download import DownloadPrompt
from mcp_nb.notebook.apps import AppView


@pytest.mark.parametrize(("uri", "name"), [
    ("file:///export.json", "export.json"),
    ("file:///a/b/../../../etc/passwd", "passwd"),
    ("../../.bashrc", "bashrc"),
    ("file:///%2e%2e%2f%2e%2e%2fsecret", "_.._secret"),
    ("file:///dir/", "dir"),
    ("https://x.example/r%C3%A9sum%C3%A9.pdf?x=1", "résumé.pdf"),
    ("file:///a\\..\\b.txt", "b.txt"),
    ("file:///<script>.html", "_script_.html"),
    ("file:///", "download"),
    ("file:///...", "download"),
    ("file:///nul\x00.txt", "nul_.txt"),
])
def test_names_are_the_uris_last_segment_and_never_a_path(uri: str, name: str) -> None:
    assert safe_name(uri) == name
    assert "/" not in safe_name(uri) and not safe_name(uri).startswith(".")


def _resource(uri: str = "file:///export.json", **content: Any) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": "application/json",
                                             **(content or {"text": '{"a": 1}'})}}


def test_the_request_is_checked() -> None:
    (file,) = check_request({"contents": [_resource()]})
    assert (file.name, file.mime_type, file.data) == ("export.json", "application/json",
                                                      b'{"a": 1}')
    (png,) = check_request({"contents": [_resource(
        "file:///p.png", blob=base64.b64encode(b"\x89PNG").decode())]})
    assert png.data == b"\x89PNG"
    for params, why in [
        ({}, "non-empty array"),
        ({"contents": [{"type": "resource_link", "uri": "https://x.example/q4.pdf",
                        "name": "Q4"}]}, "does not fetch a URL"),
        ({"contents": [_resource(blob="not base64!")]}, "not base64"),
        ({"contents": [{"type": "text", "text": "hi"}]}, "not an EmbeddedResource"),
        ({"contents": [_resource(text="x" * (MAX_BYTES + 1))]}, "at most"),
        ({"contents": [_resource()] * 11}, "at most 10 files"),
    ]:
        refused = check_request(params)
        assert isinstance(refused, str) and why in refused, (params, refused)


def test_styles_keep_only_the_specs_keys_and_safe_values() -> None:
    assert set(JUPYTERLAB_SOURCES) <= STYLE_KEYS and len(STYLE_KEYS) == 76  # the spec lists 76
    assert host_styles({"--color-background-primary": " #fff ", "--jp-layout-color0": "#fff",
                        "--color-text-primary": "red; background: url(x)",
                        "--font-sans": "system-ui, \"Segoe UI\"", "--shadow-sm": 3,
                        "--border-radius-sm": "}"}) == {"variables": {
        "--color-background-primary": "#fff", "--font-sans": "system-ui, \"Segoe UI\""}}
    assert host_styles({}) is None and host_styles("x") is None


# -- through the magics, against the lab's App --------------------------------------------

@pytest.fixture
def app(mcp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppView:
    # Jupyter Server names the kernel's notebook in JPY_SESSION_NAME.
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "work" / "lesson.ipynb"))
    mcp("connect clock --lab=--apps")
    view = mcp("call clock")
    view._on_frame_message(view.frame, {
        "kind": "created", "theme": "dark",
        "styles": {"--color-background-primary": "#111111", "--bogus": "x"}}, [])
    _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"})
    (answer,) = _frame(view, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
                              "params": {"appCapabilities": {}}})
    assert answer["result"]["hostContext"]["styles"] == {
        "variables": {"--color-background-primary": "#111111"}}
    assert answer["result"]["hostCapabilities"]["downloadFile"] == {}
    _frame(view, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    return view


def _ask(view: AppView, request_id: Any, *contents: Any) -> list[dict[str, Any]]:
    return _frame(view, {"jsonrpc": "2.0", "id": request_id, "method": "ui/download-file",
                         "params": {"contents": list(contents)}})


def test_nothing_is_saved_before_the_click_then_beside_the_notebook(
        app: AppView, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    (folder / "export.json").write_text("mine")  # the person's own file is not overwritten
    assert _ask(app, 7, _resource("file:///../export.json")) == []  # the answer waits
    (prompt,) = [c for c in app.children if isinstance(c, DownloadPrompt)]
    assert "export.json" in prompt.text.value and str(folder) in prompt.text.value
    assert sorted(p.name for p in folder.iterdir()) == ["export.json"]
    posted: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    prompt.save_button.click()
    assert posted == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    assert (folder / "export.json").read_text() == "mine"
    assert (folder / "export (1).json").read_text() == '{"a": 1}'
    assert prompt.save_button.disabled and "export (1).json" in prompt.outcome.value
    prompt.save_button.click()  # a second click does nothing
    assert len(posted) == 1
    app.hosted.settle()
    (entry,) = [e for e in app.hosted.session.transcript
                if e.direction == "host→app" and e.id == 7]
    assert "saved export (1).json (8 bytes)" in entry.note and "after the person agreed" \
        in entry.note


def test_declined_the_app_hears_so_and_nothing_is_written(app: AppView, tmp_path: Path) -> None:
    _ask(app, "d1", _resource())
    (prompt,) = [c for c in app.children if isinstance(c, DownloadPrompt)]
    posted: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    prompt.decline_button.click()
    assert posted == [{"jsonrpc": "2.0", "id": "d1", "error": {
        "code": -32000, "message": "Download denied by user"}}]
    assert list((tmp_path / "work").iterdir()) == []


def test_a_refused_request_is_answered_at_once_and_shown(app: AppView) -> None:
    (answer,) = _ask(app, 3, {"type": "resource_link", "uri": "http://127.0.0.1:1/x"})
    assert answer["error"]["code"] == -32000 and "Policy violation" in answer["error"]["message"]
    assert not [c for c in app.children if isinstance(c, DownloadPrompt)]
    assert "refused ui/download-file" in app.notes.value


def test_a_theme_switch_sends_the_new_styles(app: AppView) -> None:
    posted: list[dict[str, Any]] = []
    app.frame.send = lambda content, buffers=None: posted.append(content["message"])
    app._on_frame_message(app.frame, {"kind": "theme", "theme": "light", "styles": {
        "--color-background-primary": "#ffffff"}}, [])
    (changed,) = posted
    assert changed["method"] == "ui/notifications/host-context-changed"
    assert changed["params"]["theme"] == "light"
    assert changed["params"]["styles"] == {"variables": {"--color-background-primary": "#ffffff"}}
