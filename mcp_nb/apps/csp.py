"""The sandbox an App runs in: its Content Security Policy, Permission Policy and iframe flags.

What the specification asks of the host (2026-01-26), requirement levels kept apart:

* MUST construct the CSP from the domains the resource declares (``_meta.ui.csp``);
* MUST use the restrictive default when ``ui.csp`` is omitted::

      default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline';
      img-src 'self' data:; media-src 'self' data:; connect-src 'none';

* MAY further restrict, MUST NOT allow undeclared domains (so a declared value that
  is not a plain origin — a bare ``*``, a scheme alone, a CSP keyword, anything with
  ``;`` or a quote that would smuggle in a directive — is dropped and reported, never
  passed through);
* this host further withholds three kinds of declared origin an App has no business
  reaching (:func:`withheld_reason`): the notebook server's own origin (the App could
  talk to Jupyter's REST API and kernels), a port wildcard (``http://127.0.0.1:*``: every
  service on that host) and a wildcard over a whole top-level domain (``https://*.com``);
* the sandbox MUST use ``frame-src 'none'`` unless ``frameDomains`` is given,
  ``base-uri 'self'`` unless ``baseUriDomains`` is given, and block ``object-src``;
* MAY honour ``permissions`` through the iframe's ``allow`` attribute (this host does,
  for exactly the four the spec names); SHOULD log the CSP for review (the notebook
  shows it in the cell and the transcript).

Where the policy goes: the host renders a sandbox proxy as an ``srcdoc`` iframe whose
own ``<head>`` starts with the policy as ``<meta http-equiv>``; the App's document is
the proxy's ``srcdoc`` child and inherits that policy (an ``about:srcdoc`` document
takes its parent's policy container).  The App's own HTML is never parsed or edited
to place the policy: a ``<head>`` inside a comment could otherwise move it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..i18n import _

#: The four ``_meta.ui.csp`` keys and the directives each maps to.
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")

#: The spec's restrictive default, directive by directive, plus the three the sandbox
#: MUST set (frame-src, object-src, base-uri) — a further restriction the spec allows.
DEFAULT_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'none'"),
    ("script-src", "'self' 'unsafe-inline'"),
    ("style-src", "'self' 'unsafe-inline'"),
    ("img-src", "'self' data:"),
    ("media-src", "'self' data:"),
    ("connect-src", "'none'"),
    ("frame-src", "'none'"),
    ("object-src", "'none'"),
    ("base-uri", "'self'"),
)

#: Permission Policy feature of each ``_meta.ui.permissions`` key.
PERMISSION_FEATURES = {
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
}

#: The iframe sandbox flags.  Never ``allow-same-origin`` with ``allow-scripts`` on a
#: ``srcdoc`` frame: that would give the App the notebook's own origin (its DOM, its
#: cookies, the kernel's REST API).  Without it the frame's origin is opaque, which is
#: what makes it a different origin from the host, as the spec's sandbox requires.
SANDBOX_FLAGS = "allow-scripts"

# An origin as CSP writes one: scheme://host[:port][/path], a leading "*." allowed for
# subdomains (the spec's own example); nothing that could end or add a directive.
_ORIGIN = re.compile(
    r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::(?:[0-9]{1,5}|\*))?"
    r"(?:/[A-Za-z0-9._~!$&()*+=:@%/-]*)?")


@dataclass(frozen=True)
class SandboxPolicy:
    """What the host applies to one App, ready to show and to put in the page."""

    #: The Content-Security-Policy value.
    csp: str
    #: The iframe ``allow`` attribute (Permission Policy), "" when nothing was asked.
    allow: str
    #: The iframe ``sandbox`` attribute.
    sandbox: str
    #: Declared domains kept, by ``_meta.ui.csp`` key (what ``hostCapabilities.sandbox``
    #: reports as approved).
    approved: Mapping[str, tuple[str, ...]]
    #: Declared values dropped, each with the reason (shown in the cell): values that are
    #: not origins at all (what a server must not declare; the checkup warns of these).
    refused: tuple[tuple[str, str], ...]
    #: Permissions granted, as ``_meta.ui.permissions`` keys.
    permissions: tuple[str, ...]
    #: True when the resource declared no ``ui.csp`` (the spec's default applies).
    default: bool
    #: Declared origins this host withholds although they are origins (the notebook's own,
    #: port wildcards, TLD-wide wildcards), each with the reason (shown with ``refused``).
    withheld: tuple[tuple[str, str], ...] = ()

    def directives(self) -> list[tuple[str, str]]:
        """The policy as (directive, sources) pairs, for tables."""
        pairs = []
        for part in self.csp.split(";"):
            name, _, sources = part.strip().partition(" ")
            if name:
                pairs.append((name, sources))
        return pairs


#: Second-level labels under which a country code's registrations sit (co.uk, com.au …):
#: without the Public Suffix List, ``*.co.uk`` is recognised as TLD-wide by these.
_SHARED_SECOND_LEVELS = frozenset({"co", "com", "net", "org", "gov", "edu", "ac", "or", "ne",
                                   "go", "mil", "nic", "ltd", "plc", "gob"})
#: Names of the machine itself: an origin on one of them is an origin on all of them.
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "[::1]", "0.0.0.0", "::1"})
_DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def _split_origin(value: str) -> tuple[str, str, str | None]:
    """(scheme, host, port or None) of a declared origin that already matched _ORIGIN."""
    scheme, _, rest = value.partition("://")
    authority = rest.split("/", 1)[0]
    host, colon, port = authority.rpartition(":")
    return (scheme.lower(), host.lower(), port) if colon else (
        scheme.lower(), authority.lower(), None)


def _covers(declared: str, origin: str) -> bool:
    """Whether a CSP source ``declared`` lets the page reach ``origin`` (scheme://host:port).

    Schemes are not compared (CSP upgrades http: to https: and ws: to wss:, and Jupyter
    serves its kernels' websockets on its own origin); loopback names count as one host.
    """
    _d_scheme, d_host, d_port = _split_origin(declared)
    o_scheme, o_host, o_port = _split_origin(origin)
    o_number = int(o_port) if o_port else _DEFAULT_PORTS.get(o_scheme)
    if d_port == "*":
        port_ok = True
    elif d_port is None:
        port_ok = o_number in (80, 443)
    else:
        port_ok = int(d_port) == o_number
    if d_host.startswith("*."):
        host_ok = o_host.endswith(d_host[1:])
    else:
        host_ok = d_host == o_host or {d_host, o_host} <= _LOOPBACK
    return host_ok and port_ok


def withheld_reason(value: str, host_origins: tuple[str, ...] = ()) -> str | None:
    """Why this host withholds the declared origin ``value`` (None: it is kept).

    >>> withheld_reason("http://127.0.0.1:*")
    'a port wildcard reaches every service on 127.0.0.1'
    >>> withheld_reason("https://*.com")
    'a wildcard over the whole .com domain is no declared domain'
    >>> withheld_reason("http://localhost:8888", ("http://127.0.0.1:8888",)) is not None
    True
    """
    _scheme, host, port = _split_origin(value)
    if port == "*":
        return _("a port wildcard reaches every service on {host}").format(host=host)
    if host.startswith("*."):
        labels = host[2:].split(".")
        if len(labels) == 1 or (len(labels) == 2 and len(labels[1]) == 2
                                and labels[0] in _SHARED_SECOND_LEVELS):
            return _("a wildcard over the whole .{suffix} domain is no declared domain").format(
                suffix=host[2:])
    for origin in host_origins:
        if _covers(value, origin):
            return _("it reaches this notebook's own server {origin} (its REST API and "
                     "kernels)").format(origin=origin)
    return None


def _origins(key: str, value: Any, refused: list[tuple[str, str]],
             withheld: list[tuple[str, str]], host_origins: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        refused.append((f"{key}={value!r}", "not a list of origins"))
        return ()
    kept = []
    for item in value:
        if isinstance(item, str) and _ORIGIN.fullmatch(item):
            reason = withheld_reason(item, host_origins)
            if reason is None:
                kept.append(item)
            else:
                withheld.append((f"{key}: {item!r}", reason))
        else:
            refused.append((f"{key}: {item!r}", "not an origin (scheme://host[:port]); a "
                            "host MUST NOT allow undeclared domains, so wildcards beyond *. "
                            "and CSP keywords are dropped"))
    return tuple(kept)


def sandbox_policy(csp: Mapping[str, Any] | None,
                   permissions: Mapping[str, Any] | None = None, *,
                   host_origins: tuple[str, ...] = ()) -> SandboxPolicy:
    """The policy for a resource's declared ``_meta.ui.csp`` and ``permissions``.

    ``host_origins`` are the notebook server's own origins (``scheme://host:port``): a
    declared origin that reaches one of them is withheld.

    >>> sandbox_policy(None).csp.split("; ")[:2]
    ["default-src 'none'", "script-src 'self' 'unsafe-inline'"]
    >>> p = sandbox_policy({"connectDomains": ["https://api.example.com", "*"]})
    >>> [d for d in p.directives() if d[0] == "connect-src"]
    [('connect-src', 'https://api.example.com')]
    >>> p.refused[0][0]
    "connectDomains: '*'"
    """
    refused: list[tuple[str, str]] = []
    withheld: list[tuple[str, str]] = []
    declared = csp is not None
    approved = {key: _origins(key, (csp or {}).get(key), refused, withheld, host_origins)
                for key in CSP_KEYS}
    resources = " ".join(approved["resourceDomains"])
    directives = dict(DEFAULT_DIRECTIVES)
    if declared:
        for name in ("script-src", "style-src", "img-src", "media-src"):
            directives[name] = f"{directives[name]} {resources}".strip()
        # font-src is not in the default (default-src 'none' covers it); with declared
        # resource domains fonts come from them, as the spec's construction shows.
        if resources:
            directives["font-src"] = f"'self' {resources}"
        if approved["connectDomains"]:
            directives["connect-src"] = " ".join(approved["connectDomains"])
        if approved["frameDomains"]:
            directives["frame-src"] = " ".join(approved["frameDomains"])
        if approved["baseUriDomains"]:
            directives["base-uri"] = " ".join(approved["baseUriDomains"])
    granted = tuple(key for key in PERMISSION_FEATURES
                    if isinstance((permissions or {}).get(key), Mapping))
    allow = "; ".join(PERMISSION_FEATURES[key] for key in granted)
    return SandboxPolicy(
        csp="; ".join(f"{name} {sources}" for name, sources in directives.items()),
        allow=allow, sandbox=SANDBOX_FLAGS,
        approved={k: v for k, v in approved.items() if v}, refused=tuple(refused),
        permissions=granted, default=not declared, withheld=tuple(withheld))


def proxy_document(policy: SandboxPolicy, script: str) -> str:
    """The sandbox proxy's own document: the policy first in ``<head>``, then ``script``.

    Built entirely by the host (no server text in it: the App's HTML arrives later in
    ``ui/notifications/sandbox-resource-ready``), so the policy's place is certain.
    """
    if "</script" in script.lower():
        raise ValueError("the proxy script must not contain </script")
    return (
        "<!DOCTYPE html><html><head>"
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy.csp)}">'
        '<meta charset="utf-8"><style>html,body{margin:0;padding:0;height:100%;'
        "overflow:hidden}iframe{border:0;width:100%;height:100%;display:block}</style>"
        f"<script>{script}</script></head><body></body></html>"
    )


def describe_policy(policy: SandboxPolicy) -> list[str]:
    """Lines saying what was applied, for the cell and the static fallback."""
    lines = [(_("CSP (spec default, no ui.csp declared): {csp}") if policy.default
              else _("CSP: {csp}")).format(csp=policy.csp)]
    reached = sorted({origin for values in policy.approved.values() for origin in values})
    if reached:
        # Security: the host SHOULD warn users when the UI requires external domain access.
        lines.append(_("warning: this App may reach {origins}").format(
            origins=", ".join(reached)))
    # What the CSP cannot say: the host's page blocks it (docs/apps.md, "What the CSP does
    # not cover"), and where it cannot reach.
    lines.append(_("WebRTC: blocked by the host's script in the App's document (no CSP "
                   "directive covers it in Chromium)") + (_("; pages of the declared frame "
                   "domains are out of its reach") if policy.approved.get("frameDomains")
                   else ""))
    if policy.allow:
        lines.append(_("allow (after your click): {allow}").format(allow=policy.allow))
    for value, reason in (*policy.refused, *policy.withheld):
        lines.append(_("dropped {value}: {reason}").format(value=value, reason=reason))
    return lines
