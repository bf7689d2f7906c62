"""What the kit believes about URLs under a JupyterHub, without a hub or a browser.

Under a hub the browser's origin is the hub's and each learner's server lives at
``/user/NAME/`` behind the proxy. JupyterHub tells each server where that is
(``JUPYTERHUB_PUBLIC_URL``, a whole URL when the hub is configured with its public URL, else
only the path); deploy/hub/ also sets the kit's own ``MCP_NB_JUPYTER_URL``. The OAuth
"jupyter" callback must send the browser back there, and an App's CSP must not name the
hub's origin. (The same in a real hub and browser: tests/test_hub_class.py,
tests/test_hub_apps_browser.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_nb.apps.csp import sandbox_policy
from mcp_nb.auth.callbacks import choose_callback
from mcp_nb.auth.jupyter import CALLBACK_PATH, JupyterServerCallback
from mcp_nb.notebook.app_origins import notebook_origins

#: A host no other test's page reports (the kernel remembers those for the process's life).
HUB = "https://class.school.example"
#: What JupyterHub's spawner puts in a learner's server's environment (and so its kernels').
HUB_WITH_PUBLIC_URL = {
    "JUPYTERHUB_SERVICE_PREFIX": "/user/ada/",
    "JUPYTERHUB_PUBLIC_URL": f"{HUB}/user/ada/",
    "JUPYTERHUB_PUBLIC_HUB_URL": f"{HUB}/hub/",
}
HUB_WITHOUT_PUBLIC_URL = {
    "JUPYTERHUB_SERVICE_PREFIX": "/user/ada/",
    "JUPYTERHUB_PUBLIC_URL": "/user/ada/",
    "JUPYTERHUB_PUBLIC_HUB_URL": "/hub/",
}


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No hub, no desktop, no Jupyter server running: each test says what it has."""
    for name in ("MCP_NB_JUPYTER_URL", "DISPLAY", "WAYLAND_DISPLAY", "BINDER_SERVICE_HOST",
                 "BINDER_REQUEST", *HUB_WITH_PUBLIC_URL):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    return monkeypatch


def _set(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


def test_on_a_hub_with_a_public_url_the_redirect_comes_back_to_the_learners_server(
        environment: pytest.MonkeyPatch) -> None:
    _set(environment, HUB_WITH_PUBLIC_URL)
    callback = choose_callback("auto")
    assert isinstance(callback, JupyterServerCallback)
    assert callback.redirect_uri == f"{HUB}/user/ada/{CALLBACK_PATH}"


def test_the_kits_own_setting_wins_over_the_hubs(environment: pytest.MonkeyPatch) -> None:
    _set(environment, HUB_WITH_PUBLIC_URL)
    environment.setenv("MCP_NB_JUPYTER_URL", "https://other.example.org/user/ada")
    callback = choose_callback("auto")
    assert isinstance(callback, JupyterServerCallback)
    assert callback.redirect_uri == f"https://other.example.org/user/ada/{CALLBACK_PATH}"


def test_a_hub_that_knows_only_the_path_gets_paste_back(
        environment: pytest.MonkeyPatch) -> None:
    # A path names no host the browser could come back to: the person pastes the address.
    _set(environment, HUB_WITHOUT_PUBLIC_URL)
    assert choose_callback("auto").name == "paste-back"
    with pytest.raises(ValueError, match="JUPYTERHUB_PUBLIC_URL"):
        JupyterServerCallback()


def test_the_hubs_origin_is_the_notebooks_before_any_page_says_so(
        environment: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "jpserver-7.json").write_text(
        '{"url": "http://127.0.0.1:41234/user/ada/"}')
    _set(environment, HUB_WITH_PUBLIC_URL)
    origins = notebook_origins()
    assert {"http://127.0.0.1:41234", f"{HUB}:443"} <= set(origins)
    policy = sandbox_policy({"connectDomains": [HUB, "https://api.example.com"]},
                            host_origins=origins)
    assert dict(policy.directives())["connect-src"] == "https://api.example.com"
    ((value, reason),) = policy.withheld
    assert HUB in value and f"{HUB}:443" in reason


def test_a_path_only_public_url_names_no_origin(environment: pytest.MonkeyPatch) -> None:
    _set(environment, HUB_WITHOUT_PUBLIC_URL)
    assert not any("/user/" in origin or "/hub/" in origin for origin in notebook_origins())
