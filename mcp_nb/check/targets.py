"""An ``mcpServers`` entry (Claude-Desktop-style config) as a checkup target.

An entry is ``{"command": …, "args": […], "env": {…}, "cwd": …}`` (stdio) or
``{"url": …, "headers": {…}}`` (HTTP), the same shape ``%mcp connect NAME --config FILE``
reads.  :func:`run_entry_checkup` runs the checkup on it with its environment,
working directory and headers::

    entry = server_entry(load_config("servers.json"), "lab")
    report = await run_entry_checkup(entry, call_tools="all")

An entry's ``"headers"`` (a token, most often) go on every request to the URL's origin,
the raw HTTP probes' included (as ``--header`` does); the report names them, never their
values.  An entry's ``"auth"`` (OAuth) is refused, since the checkup runs no
authorization flow: connect with ``%mcp connect NAME --config FILE`` and check the open
session with ``%mcp check --session NAME``.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..i18n import _
from .headers import shown_names
from .model import Report
from .runner import run_checkup


class ConfigError(ValueError):
    """The config or the entry cannot be used as a target (the message says why)."""


@dataclass(frozen=True)
class ServerEntry:
    name: str
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def target(self) -> str | list[str]:
        return self.url if self.url is not None else self.command

    def describe(self) -> str:
        """What the report names as its target; environment values and header values never
        appear (they are often secrets), only their names."""
        if self.url is not None:
            shown = f"{self.name}: {self.url}"
            if self.headers:
                shown += _(" (headers {names}: values not shown)").format(
                    names=shown_names(self.headers))
            return shown
        shown = f"{self.name}: {shlex.join(self.command)}"
        if self.env:
            shown += f" (env {', '.join(sorted(self.env))})"
        return shown


def load_config(source: str | os.PathLike[str] | Mapping[str, Any]) -> Mapping[str, Any]:
    """The mcpServers document: a JSON file's, or a dict of that shape as it is."""
    if isinstance(source, Mapping):
        return source
    path = Path(source)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(_("cannot read {path}: {error}").format(path=path, error=exc)) from None
    if not isinstance(document, Mapping):
        raise ConfigError(_("{path} is not a JSON object with \"mcpServers\"").format(path=path))
    return document


def server_entry(config: Mapping[str, Any], name: str | None) -> ServerEntry:
    """The entry ``name`` of ``config["mcpServers"]`` (the only one when ``name`` is None)."""
    servers = config.get("mcpServers")
    if not isinstance(servers, Mapping):
        raise ConfigError(_("the config has no \"mcpServers\" object"))
    if name is None:
        if len(servers) != 1:
            raise ConfigError(_("the config has {count} servers ({names}); "
                              "name one").format(count=len(servers), names=", ".join(servers)))
        name = str(next(iter(servers)))
    if name not in servers:
        raise ConfigError(_("the config has no server {name}; it has {names}").format(
            name=repr(name), names=", ".join(servers)))
    entry = servers[name]
    if not isinstance(entry, Mapping) or not ("command" in entry or "url" in entry):
        raise ConfigError(_("server {name} needs a \"command\" (or a \"url\")").format(
            name=repr(name)))
    if "auth" in entry:
        raise ConfigError(_("server {name} has \"auth\": the checkup runs no authorization "
                          "flow; connect to it (%mcp connect NAME --config FILE) and check "
                          "the open session (%mcp check --session NAME)").format(name=repr(name)))
    if "url" in entry:
        return ServerEntry(name, url=str(entry["url"]), headers={
            str(k): str(v) for k, v in (entry.get("headers") or {}).items()})
    args = entry.get("args") or []
    if not isinstance(entry["command"], str) or not isinstance(args, Sequence) \
            or isinstance(args, str):
        raise ConfigError(_("server {name}: \"command\" is a string and \"args\" a "
                            "list").format(name=repr(name)))
    return ServerEntry(name, command=[entry["command"], *map(str, args)],
                       env={str(k): str(v) for k, v in (entry.get("env") or {}).items()},
                       cwd=None if entry.get("cwd") is None else str(entry["cwd"]))


async def run_entry_checkup(entry: ServerEntry, *, call_tools: str | Sequence[str] = (),
                            timeout: float = 10.0, prompts_get: bool = True,
                            template_reads: bool = True) -> Report:
    """Run the checkup on an mcpServers entry, with its env, cwd and headers (the options
    are :func:`~mcp_nb.check.runner.run_checkup`'s)."""
    report = await run_checkup(entry.target, call_tools=call_tools, timeout=timeout,
                               env=entry.env or None, cwd=entry.cwd,
                               prompts_get=prompts_get, template_reads=template_reads,
                               headers=entry.headers or None)
    report.target = entry.describe()
    return report
