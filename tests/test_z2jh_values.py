"""deploy/z2jh/values.yaml: it parses, uses only keys zero-to-jupyterhub's chart declares, and
says what the course needs (the kit's extension, the course copied in, idle culling).

The chart's schema (``jupyterhub/values.schema.yaml`` in jupyterhub/zero-to-jupyterhub-k8s) is
not vendored here: :data:`CHART_KEYS` lists the keys this file relies on, as read from it.
Point ``Z2JH_VALUES_SCHEMA`` at a copy of that file and the last test checks both the list and
the whole file against it (types included), with the chart's own defaults standing in for the
keys it requires.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
VALUES = ROOT / "deploy" / "z2jh" / "values.yaml"
#: Keys of the chart this file uses, read from its values.schema.yaml (commit 48ea50e3).
#: ``*`` stands for one key of a map the chart lets us name; ``**`` for anything below a key
#: whose content the chart passes on as it is (traitlets config, k8s objects, file data).
CHART_KEYS = (
    "hub.config.*.**",
    "singleuser.image.name", "singleuser.image.tag",
    "singleuser.cmd", "singleuser.defaultUrl",
    "singleuser.cpu.guarantee", "singleuser.cpu.limit",
    "singleuser.memory.guarantee", "singleuser.memory.limit",
    "singleuser.storage.capacity",
    "singleuser.extraEnv.*",
    "singleuser.extraFiles.*.mountPath", "singleuser.extraFiles.*.data.**",
    "singleuser.lifecycleHooks.postStart.**",
    "cull.enabled", "cull.timeout", "cull.every", "cull.maxAge", "cull.users",
)


def values() -> dict[str, Any]:
    loaded = yaml.safe_load(VALUES.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def leaves(tree: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(tree, dict) and tree:
        for key, value in tree.items():
            yield from leaves(value, (*path, str(key)))
    else:
        yield path


def declared(path: tuple[str, ...], pattern: str) -> bool:
    parts = pattern.split(".")
    for index, part in enumerate(parts):
        if part == "**":
            return len(path) >= index
        if index >= len(path) or (part != "*" and part != path[index]):
            return False
    return len(path) == len(parts)


def test_every_key_used_is_one_the_chart_declares() -> None:
    unknown = [".".join(path) for path in leaves(values())
               if not any(declared(path, pattern) for pattern in CHART_KEYS)]
    assert unknown == []


def test_the_learners_server_is_the_course_with_the_kits_extension() -> None:
    single = values()["singleuser"]
    extension = next(f for f in single["extraFiles"].values()
                     if f["mountPath"].startswith("/etc/jupyter/jupyter_server_config.d/"))
    assert extension["mountPath"].endswith(".json")  # the chart renders data by extension
    assert extension["data"]["ServerApp"]["jpserver_extensions"]["mcp_nb.auth.jupyter"] is True
    # The course is copied from where the header's repo2docker command puts the repository.
    header = VALUES.read_text(encoding="utf-8").split("\nhub:")[0]
    target = re.search(r"--target-repo-dir (\S+)", header)
    assert target is not None
    (copy,) = single["lifecycleHooks"]["postStart"]["exec"]["command"][2:]
    source, destination = shlex.split(copy)[-2:]
    assert source == f"{target.group(1)}/notebooks" and destination.endswith("/notebooks")
    assert (ROOT / "binder" / "requirements.txt").exists()
    # The default page is a chapter the course has.
    assert (ROOT / single["defaultUrl"].removeprefix("/lab/tree/")).is_file()


def test_idle_servers_are_culled_and_the_hub_knows_its_public_url() -> None:
    loaded = values()
    cull = loaded["cull"]
    assert cull["enabled"] is True and cull["timeout"] > 0 and cull["every"] > 0
    assert cull["every"] < cull["timeout"]
    assert int(loaded["singleuser"]["extraEnv"]["JUPYTERHUB_ACTIVITY_INTERVAL"]) < cull["timeout"]
    assert loaded["hub"]["config"]["JupyterHub"]["public_url"].startswith("https://")


def test_resources_cover_what_the_hub_benchmark_measured() -> None:
    single = values()["singleuser"]
    for kind in ("cpu", "memory"):
        assert set(single[kind]) == {"guarantee", "limit"}
    assert "PLACEHOLDER" not in VALUES.read_text(encoding="utf-8")
    # benchmarks/RESULTS.md, "A class on JupyterHub": about 250 MiB (PSS) per learner with one
    # notebook open, a kernel (~76 MiB) more per notebook; a core per five busy learners.
    mebibytes = {"M": 1, "G": 1024}
    memory = {key: float(value[:-1]) * mebibytes[value[-1]]
              for key, value in single["memory"].items()}
    assert 250 + 76 <= memory["guarantee"] < memory["limit"]
    assert 0.2 <= single["cpu"]["guarantee"] < single["cpu"]["limit"]


def _without_required(schema: Any) -> Any:
    """The schema with every ``required`` dropped: helm merges this file over the chart's
    defaults, which fill in what a school leaves out."""
    if isinstance(schema, dict):  # not inside oneOf/anyOf, where required picks a branch
        return {k: v if k in ("oneOf", "anyOf") else _without_required(v)
                for k, v in schema.items() if k != "required"}
    if isinstance(schema, list):
        return [_without_required(item) for item in schema]
    return schema


def test_the_file_and_the_key_list_against_the_charts_own_schema() -> None:
    location = os.environ.get("Z2JH_VALUES_SCHEMA")
    if not location:
        pytest.skip("set Z2JH_VALUES_SCHEMA to zero-to-jupyterhub-k8s's "
                    "jupyterhub/values.schema.yaml to check against it")
    jsonschema = pytest.importorskip("jsonschema")
    schema = _without_required(yaml.safe_load(Path(location).read_text(encoding="utf-8")))
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}"
              for e in jsonschema.Draft7Validator(schema).iter_errors(values())]
    assert errors == []
    # Each listed key exists there (a '*' is a map the chart lets us name).
    for pattern in CHART_KEYS:
        node = schema
        for part in pattern.split("."):
            if part == "**":
                break
            if part == "*":
                assert node.get("patternProperties") or node.get("additionalProperties"), pattern
                node = next(iter(node.get("patternProperties", {}).values()), {})
            else:
                assert part in node.get("properties", {}), pattern
                node = node["properties"][part]
