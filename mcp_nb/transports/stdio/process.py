"""The server as a process group: its environment, signals to the whole group, no orphans.

A server may start processes of its own (``npx`` runs ``node``; a wrapper
script runs the real server).  They share the server's process group (the
server is spawned as the leader of a new session), so every signal of the
shutdown escalation goes to the group, and once the server has exited what is
left of the group is killed: nothing the server started outlives its session.

Three more layers make that hold when no orderly close happens:

* an ``atexit`` sweep kills every group still registered when Python exits;
* a *watchdog* per group, a tiny ``sh`` in a session of its own, reads a pipe
  only this process holds; when this process dies, even by SIGKILL, the pipe
  ends and the watchdog kills the group;
* on Linux the server also gets a parent-death signal (``setpriv
  --pdeathsig KILL``), which ends it even before the watchdog wakes.

A process that leaves the group on purpose (``setsid``, a daemon) is beyond
all of these: that is what leaving the group means.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence

from ...i18n import _

#: Environment variables a server inherits by default. Everything else (API keys,
#: tokens in the notebook's environment) must be passed explicitly.
DEFAULT_INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")

_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None
_WATCHDOG_SHELL = "/bin/sh" if os.path.exists("/bin/sh") and hasattr(os, "killpg") else None
# Waits for end of file on its stdin (this process gone, or the group released),
# then kills the group; "kill -9 -PGID" is the spelling every POSIX sh accepts.
_WATCHDOG_SCRIPT = 'read _; kill -9 -"$1" 2>/dev/null'


def default_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: the safe inherited variables plus ``extra``."""
    env = {k: os.environ[k] for k in DEFAULT_INHERITED_ENV if k in os.environ}
    if extra:
        env.update(extra)
    return env


def with_parent_death_signal(argv: Sequence[str]) -> list[str]:
    """``argv`` run so that the kernel kills it if this process dies (Linux; else unchanged).

    ``setpriv`` sets the signal and execs the server, so the server keeps its pid.
    """
    if _SETPRIV:
        return [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]
    return list(argv)


def describe_returncode(code: int | None) -> str:
    if code is None:
        return _("still running")
    if code < 0:
        try:
            return _("killed by {signal}").format(signal=signal.Signals(-code).name)
        except ValueError:
            return _("killed by signal {number}").format(number=-code)
    return _("exit code {code}").format(code=code)


class ProcessGroup:
    """The process group a server leads (its id is the server's pid), until released."""

    def __init__(self, pgid: int, *, watchdog: bool = True) -> None:
        self.pgid = pgid
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watchdog_pipe: int | None = None
        if watchdog and _WATCHDOG_SHELL is not None:
            self._start_watchdog(_WATCHDOG_SHELL)
        _LIVE_GROUPS[pgid] = self

    def _start_watchdog(self, shell: str) -> None:
        _reap_watchdogs()
        # Our end is not inherited by any child (os.pipe fds are non-inheritable),
        # so only this process's death or release() ends the watchdog's stdin.
        read_end, write_end = os.pipe()
        try:
            self._watchdog = subprocess.Popen(
                [shell, "-c", _WATCHDOG_SCRIPT, "mcp_nb-watchdog", str(self.pgid)],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                # Out of the kernel's process group: an interrupt or a group kill of
                # the kernel must leave the watchdog to do its job.
                start_new_session=True)
        except OSError:
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        self._watchdog_pipe = write_end

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to every process in the group; False if the group is empty."""
        try:
            if hasattr(os, "killpg"):
                os.killpg(self.pgid, signum)
            else:  # no process groups (Windows): the server alone
                os.kill(self.pgid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def sweep(self) -> bool:
        """Kill what is left of the group; True if anything was (the server has exited)."""
        return self.signal(signal.SIGKILL)

    def release(self) -> None:
        """Forget the group (after :meth:`sweep`): its watchdog exits without killing anyone."""
        _LIVE_GROUPS.pop(self.pgid, None)
        if self._watchdog_pipe is not None:
            os.close(self._watchdog_pipe)
            self._watchdog_pipe = None
        if self._watchdog is not None:
            _EXITING_WATCHDOGS.append(self._watchdog)
            self._watchdog = None


# Groups not yet released, for the atexit sweep.
_LIVE_GROUPS: dict[int, ProcessGroup] = {}
# Released watchdogs, reaped without waiting the next time one starts.
_EXITING_WATCHDOGS: list[subprocess.Popen[bytes]] = []


def _reap_watchdogs() -> None:
    _EXITING_WATCHDOGS[:] = [dog for dog in _EXITING_WATCHDOGS if dog.poll() is None]


def _kill_live_groups() -> None:
    for group in list(_LIVE_GROUPS.values()):
        group.sweep()


atexit.register(_kill_live_groups)
