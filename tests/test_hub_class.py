"""A class at once on JupyterHub: ten learners through the hub's proxy, each in a server of
their own (deploy/hub/, tests/hub_support.py).

Each learner logs in with the hub's login form, gets a server spawned, opens it through the
proxy at ``/user/NAME/`` and runs chapters 01, 05, 06, 07 and 11 in real kernels over REST and
the kernel websocket, four learners at a time; chapter 11's OAuth redirect comes back through
the learner's own server. Then: no learner reaches another's server, kernels, files or MCP
sessions; and when a server is stopped through the hub's API, or culled by
jupyterhub-idle-culler, every process it started is gone.

Strict output comparison is nbval's job (tests/test_notebooks.py): here a chapter passes when
no cell fails and it shows what it shows when it works (hub_support.CHAPTER_SHOWS).
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator

import anyio
import httpx
import pytest
import tornado.httpclient
from hub_support import (
    CHAPTERS,
    Hub,
    Learner,
    LearnerRun,
    command_line,
    kind_of,
    run_class,
    running_hub,
    wait_until_gone,
)
from remote_kernel import RemoteKernel

#: The class: ten learners (the issue's floor for CI), four of them working at any moment.
LEARNERS = 10
AT_ONCE = 4
#: The class takes minutes (benchmarks/RESULTS.md, "A class on JupyterHub"), all of it in the
#: first test's setup: past the suite's per-test default.
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    with running_hub(tmp_path_factory.mktemp("hub"), LEARNERS) as running:
        yield running


@pytest.fixture(scope="module")
def lesson(hub: Hub) -> dict[str, LearnerRun]:
    """Every learner's class, run once for the module's tests."""
    return anyio.run(lambda: run_class(hub, hub.learners, at_once=AT_ONCE))


def test_every_learner_runs_the_chapters_through_the_proxy(lesson: dict[str, LearnerRun]
                                                           ) -> None:
    assert len(lesson) == LEARNERS
    assert [failure for run in lesson.values() for failure in run.failures()] == []
    assert all(list(run.chapters) == list(CHAPTERS) for run in lesson.values())


def test_the_oauth_redirect_comes_back_through_the_learners_own_server(
        hub: Hub, lesson: dict[str, LearnerRun]) -> None:
    for name, run in lesson.items():
        # The person's browser went to /user/NAME/ on the hub's origin, and landed.
        assert [(location.split("?")[0], status) for location, status in run.redirects] == [
            (hub.base(name) + "mcp_nb/oauth/callback", 200)], name
        shown = "\n".join(cell.text() for cell in run.chapters[CHAPTERS[-1]][-2:])
        assert "authorized through the hub" in shown and "callback: jupyter-server" in shown
        # The server extension handed the redirect over in the learner's own home, readable
        # by its owner only, and the kernel took it.
        handoff = hub.home(name) / ".local" / "share" / "jupyter" / "runtime" / "mcp_nb_oauth"
        assert stat.S_IMODE(handoff.stat().st_mode) == 0o700
        assert list(handoff.iterdir()) == []


async def _statuses(hub: Hub, headers: dict[str, str], paths: list[str],
                    cookies: httpx.Cookies | None = None) -> dict[str, int]:
    async with httpx.AsyncClient(base_url=hub.url, trust_env=False, timeout=60,
                                 cookies=cookies) as http:
        return {path: (await http.get(path, headers=headers, follow_redirects=True)).status_code
                for path in paths}


async def _hub_api_statuses(hub: Hub, headers: dict[str, str], other: str) -> set[int]:
    """What the hub's API answers these credentials about ``other``: read them, stop them."""
    async with httpx.AsyncClient(base_url=hub.url + "hub/api/", headers=headers,
                                 trust_env=False, timeout=60) as api:
        return {(await api.get(f"users/{other}")).status_code,
                (await api.delete(f"users/{other}/server")).status_code}


async def _websocket_status(hub: Hub, headers: dict[str, str], name: str,
                            kernel_id: str) -> int:
    """101 if these credentials may join the websocket of ``name``'s kernel, else the refusal."""
    async with httpx.AsyncClient(trust_env=False, timeout=60) as http:
        kernel = RemoteKernel(http, hub.base(name), headers)
        try:
            await kernel.attach(kernel_id)
        except tornado.httpclient.HTTPClientError as refused:
            return refused.code
        await kernel.close(keep=True)
        return 101


def test_no_learner_reaches_another_learners_server(hub: Hub,
                                                    lesson: dict[str, LearnerRun]) -> None:
    names = hub.learners
    for a, b in zip(names, [*names[1:], names[0]], strict=True):
        mine, theirs = lesson[a], lesson[b]
        own = {"Authorization": f"token {mine.token}"}
        paths = ["user/{}/api/kernels", f"user/{{}}/api/kernels/{theirs.kernel_id}",
                 "user/{}/api/sessions", "user/{}/api/contents/notebooks",
                 "user/{}/files/notebooks/01_initialization.ipynb"]
        # The same requests to one's own server work: the refusals below are about whose.
        mine_ok = anyio.run(_statuses, hub, own, [p.format(a) for p in paths if theirs.kernel_id
                                                  not in p])
        assert set(mine_ok.values()) == {200}, mine_ok
        assert anyio.run(_websocket_status, hub, own, a, mine.kernel_id) == 101
        # A's token on B's server: refused, every route.
        refused = anyio.run(_statuses, hub, own, [p.format(b) for p in paths])
        assert set(refused.values()) == {403}, refused
        assert anyio.run(_websocket_status, hub, own, b, theirs.kernel_id) == 403
        # With A's browser cookies: the hub refuses to log A in to B's server.
        browsed = anyio.run(_statuses, hub, {}, [f"user/{b}/lab", f"user/{b}/api/kernels"],
                            mine.cookies)
        assert set(browsed.values()) == {403}, browsed
        # Nor the hub's API: B's record and B's server are not A's to see or to stop.
        assert anyio.run(_hub_api_statuses, hub, own, b) <= {403, 404}


def test_mcp_sessions_stay_in_their_learners_kernel(hub: Hub,
                                                    lesson: dict[str, LearnerRun]) -> None:
    async def sessions(name: str) -> str:
        async with httpx.AsyncClient(trust_env=False, timeout=60) as http:
            kernel = RemoteKernel(http, hub.base(name),
                                  {"Authorization": f"token {lesson[name].token}"})
            await kernel.attach(lesson[name].kernel_id)
            try:
                return (await kernel.execute("%mcp sessions")).text()
            finally:
                await kernel.close(keep=True)

    for name in hub.learners:
        listed = set(re.findall(r"own_learner\d+", anyio.run(sessions, name)))
        assert listed == {f"own_{name}"}
    # And a learner's server does not serve files outside the learner's home.
    other = hub.learners[1]
    escape = [f"user/{hub.learners[0]}/api/contents/../{other}/notebooks",
              f"user/{hub.learners[0]}/api/contents/..%2F{other}%2Fnotebooks"]
    token = lesson[hub.learners[0]].token
    statuses = anyio.run(_statuses, hub, {"Authorization": f"token {token}"}, escape)
    assert all(status in (400, 403, 404) for status in statuses.values()), statuses


def _started(hub: Hub, names: list[str]) -> dict[str, set[int]]:
    started = {name: hub.processes(name) for name in names}
    for name, pids in started.items():
        # Something to clean up: the server, chapter 11's kernel and the MCP servers in it.
        assert {kind_of(pid) for pid in pids} >= {"server", "kernel", "http lab", "stdio lab"}, (
            name, [command_line(pid) for pid in pids])
    return started


def test_stopping_a_server_through_the_hub_ends_every_process_it_started(
        hub: Hub, lesson: dict[str, LearnerRun]) -> None:
    names = hub.learners[: LEARNERS // 2]
    started = _started(hub, names)

    async def stop_all() -> None:
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(hub.stop_server, name)

    anyio.run(stop_all)
    for name in names:
        assert wait_until_gone(started[name]) == {}, name
        assert hub.processes(name) == set(), name


def test_culling_idle_servers_ends_every_process_they_started(
        hub: Hub, lesson: dict[str, LearnerRun]) -> None:
    names = hub.learners[LEARNERS // 2:]
    started = _started(hub, names)
    with hub.culler(timeout=1) as culler:
        anyio.run(hub.wait_for_no_server, names, 180.0)
    culled = {name for name in names
              if any(f"Culling server {name}" in line for line in culler.lines)}
    assert culled == set(names), "\n".join(culler.lines[-20:])
    for name in names:
        assert wait_until_gone(started[name]) == {}, name
        assert hub.processes(name) == set(), name


def test_each_learner_got_a_home_of_their_own_with_the_course(hub: Hub) -> None:
    homes = sorted(path.name for path in (hub.root / "homes").iterdir())
    assert homes == sorted(hub.learners)
    for name in hub.learners:
        assert (hub.home(name) / "notebooks" / "11_authorization.ipynb").is_file()
        assert (hub.home(name) / "notebooks" / "zh" / "11_authorization.ipynb").is_file()


def test_the_class_password_is_needed(hub: Hub) -> None:
    async def wrong() -> tuple[int, bool]:
        async with Learner(hub, hub.learners[0]) as learner:
            answer = await learner.log_in(password="not the class password")
            return answer.status_code, "jupyterhub-session-id" in learner.http.cookies
    status, logged_in = anyio.run(wrong)
    assert status == 403 and not logged_in

