"""Regenerate the README's and the guide's screenshots from a real JupyterLab in Chromium.

    python scripts/screenshots.py            # writes docs/images/session-widgets.png, explorer.png,
                                             # mcp-app.png
    python scripts/screenshots.py mcp-app    # only the named ones

It starts JupyterLab on loopback with the browser tests' machinery
(``tests/browser_support.py``: Debian's chromium through Playwright, nothing
but the local server reachable), runs a small notebook in a real kernel, uses
the widgets as a person would (a tool form's Call, the explorer's tabs) and
photographs the page.  Look at the pictures before committing them.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
sys.path.insert(0, str(ROOT / "tests"))

from apps_support import install_example  # noqa: E402
from browser_support import (  # noqa: E402  (tests/ is not a package)
    LAB,
    JupyterServer,
    browser_page,
    cell,
    live_widgets,
    open_notebook,
    outputs,
    run_all,
    write_notebook,
)

SESSION = "session.ipynb"
EXPLORE = "explore.ipynb"
APP = "app.ipynb"


def _fill(scope, label: str, value: str) -> None:
    box = scope.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")  # number boxes sync to the kernel on Enter or blur


def session_widgets(page, server: JupyterServer, path: Path) -> None:
    """The session view (the state diagram, the path taken) and a tool form that was used."""
    write_notebook(server.root / SESSION, ["%load_ext mcp_nb", "%mcp connect", "%mcp form add"])
    open_notebook(page, server, SESSION)
    run_all(page)
    form = live_widgets(cell(page, 2), "vbox").first
    _fill(form, "a *", "2")
    _fill(form, "b *", "3")
    form.get_by_role("button", name="Call").click()
    form.locator(".widget-html", has_text=re.compile(r"\b5\b")).wait_for()
    live_widgets(cell(page, 1)).first.locator("svg g.state.current").wait_for()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:deselect-all')")
    page.screenshot(path=str(path))


def explorer(page, server: JupyterServer, path: Path) -> None:
    """The explorer after a tool call, on its Notifications tab: the log line the call caused."""
    write_notebook(server.root / EXPLORE, ["%load_ext mcp_nb", "%mcp connect", "%mcp explore"])
    open_notebook(page, server, EXPLORE)
    run_all(page)
    widget = cell(page, 2)
    tabs = widget.locator(".lm-TabBar-tab")
    tabs.filter(has_text="Tools").first.wait_for()
    widget.locator("select").first.select_option(label="add — Add")
    _fill(widget, "a *", "2")
    _fill(widget, "b *", "3")
    widget.get_by_role("button", name="Call").click()
    widget.locator(".widget-html", has_text=re.compile(r"\b5\b")).first.wait_for()
    tabs.filter(has_text="Notifications").first.click()
    widget.get_by_text("add called").wait_for()
    widget.scroll_into_view_if_needed()
    live_widgets(widget).first.screenshot(path=str(path))


def mcp_app(page, server: JupyterServer, path: Path) -> None:
    """The official example App (server-basic-vanillajs from npm) in a cell, after a message."""
    import shlex

    command = shlex.join(install_example())
    write_notebook(server.root / APP, ["%load_ext mcp_nb", f"%mcp connect basic -- {command}",
                                       "%mcp call get-time"])
    open_notebook(page, server, APP)
    run_all(page)
    app = cell(page, 2)
    view = outputs(app).frame_locator("iframe.mcpnb-app-frame").frame_locator("iframe")
    view.locator("#server-time").filter(has_text=re.compile(r"\d{4}-\d\d-\d\dT")).wait_for()
    view.get_by_role("button", name="Send Message").click()
    outputs(app).get_by_text("would go to the conversation").wait_for()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:deselect-all')")
    app.scroll_into_view_if_needed()
    app.screenshot(path=str(path))


SHOTS = {"session-widgets": session_widgets, "explorer": explorer, "mcp-app": mcp_app}


def main() -> None:
    names = sys.argv[1:] or list(SHOTS)
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mcp-nb-shots-") as scratch:
        root, home = Path(scratch) / "root", Path(scratch) / "home"
        root.mkdir()
        server = JupyterServer(root, home, LAB)
        try:
            with browser_page(server, width=1280, height=900) as page:
                for name in names:
                    SHOTS[name](page, server, IMAGES / f"{name}.png")
        finally:
            leftovers = server.stop()
    if leftovers:
        sys.exit(f"processes outlived JupyterLab (killed): {leftovers}")
    print("wrote", *(str(IMAGES / f"{name}.png") for name in names))


if __name__ == "__main__":
    main()
