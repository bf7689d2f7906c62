"""The checkup's resources checks on the main session: listed URIs, reads, and templates.

``resources.uris`` judges what ``resources/list`` gave (RFC 3986 URIs, MIME types),
``resources.read`` reads a sample of them (``resources/read`` has no side effects
by the spec) and ``resources.templates`` judges ``resources/templates/list``
(RFC 6570).  What 2026-07-28 removed, ``resources/subscribe``, is asked on a
handshake-era session instead (:mod:`~mcp_nb.check.handshake_features`).

Example (what the feature phase does with it)::

    await self.resources(main, listed["resources"])
    self.results["resources.read"].outcome   # 'pass': contents well-formed under the uri read
"""

from __future__ import annotations

from typing import Any

import anyio

from ..client import ClientSession
from ..client.errors import ServerError
from ..i18n import _
from .model import transcript_evidence as _entry
from .recorder import SAMPLE, CheckupCore, Exchange
from .shapes import contents_problems
from .uris import template_problem, uri_problem

RESOURCE_CHECKS = ("resources.uris", "resources.list-types", "resources.read",
                   "resources.templates")


class ResourceChecks(CheckupCore):
    """resources.uris (and the listing's types), resources.read and resources.templates."""

    async def resources(self, main: ClientSession, resources: list[Any]) -> None:
        listing = [_entry("main", e) for e in main.transcript
                   if e.direction == "recv" and e.kind == "response" and e.message
                   and isinstance(e.message.get("result"), dict)
                   and "resources" in e.message["result"]][:2]
        # RFC 3986 is the sentence's MUST (resources.uris); the types are the schema's
        # (resources.list-types, which only warns).
        problems, shapes, readable = [], [], []
        for resource in resources:
            uri = resource.get("uri") if isinstance(resource, dict) else None
            if not isinstance(uri, str):
                shapes.append(_("a resource has no string uri ({resource})").format(
                    resource=f"{resource!r:.80}"))
                continue
            if (why := uri_problem(uri)) is not None:
                problems.append(f"{uri!r} {why}")
            else:
                readable.append(uri)
            if "mimeType" in resource and not isinstance(resource["mimeType"], str):
                shapes.append(_("{uri}: mimeType {mime} is not a string").format(
                    uri=repr(uri), mime=repr(resource["mimeType"])))
        strings = sum(1 for r in resources
                      if isinstance(r, dict) and isinstance(r.get("uri"), str))
        if not resources:
            self.skip(["resources.uris", "resources.list-types"], _("no resources listed"))
        else:
            self.put("resources.list-types", "fail" if shapes else "pass",
                     "; ".join(shapes[:5]) or _("{count} resource(s) typed as the schema "
                                                "says").format(count=len(resources)), listing)
        if not strings:
            self.skip(["resources.uris"], _("no resource listed with a string uri to judge"))
        else:
            self.put("resources.uris", "fail" if problems else "pass",
                     "; ".join(problems[:5]) or _("{count} resource URI(s) valid").format(
                         count=strings), listing)
        async with anyio.create_task_group() as group:
            group.start_soon(self.guarded, ("resources.read",), self.reads, main,
                             readable[:SAMPLE])
            group.start_soon(self.guarded, ("resources.templates",), self.templates, main)

    async def reads(self, main: ClientSession, uris: list[str]) -> None:
        check = "resources.read"
        if not uris:
            self.skip([check], _("no listed resource has a valid URI to read"))
            return
        answers: dict[str, Exchange] = {}

        async def read(uri: str) -> None:
            answers[uri] = await self.exchange(main, "main", "resources/read", {"uri": uri})

        async with anyio.create_task_group() as group:
            for uri in uris:
                group.start_soon(read, uri)
        problems, elsewhere, refused, evidence = [], [], [], []
        for uri in uris:
            answer, entries = answers[uri]
            evidence += entries
            if isinstance(answer, ServerError):
                # A listed resource may still be unreadable now (gone, access): not the shape.
                refused.append(_("{uri} answered error {code}").format(uri=uri, code=answer.code))
                continue
            shape, found = contents_problems(uri, answer)
            problems += shape
            if not shape and not found:
                elsewhere.append(uri)
        if problems:
            self.put(check, "fail", "; ".join(problems[:5]), evidence)
        elif elsewhere:
            self.put(check, "warn", _("no content carries the uri read: {uris}").format(
                     uris=", ".join(elsewhere[:5])), evidence)
        elif len(refused) == len(uris):
            self.skip([check], _("not judged: every read was refused ({why})").format(
                why="; ".join(refused)))
        else:
            self.put(check, "pass", _("{count} resource(s) read, contents "
                     "well-formed under the uri read").format(count=len(uris) - len(refused))
                     + (f" ({'; '.join(refused)})" if refused else ""), evidence)

    async def templates(self, main: ClientSession) -> None:
        check = "resources.templates"
        answer, evidence = await self.exchange(main, "main", "resources/templates/list")
        if isinstance(answer, ServerError) and answer.code == -32601:
            self.skip([check], _("the server does not serve resources/templates/list"))
            return
        templates = answer.get("resourceTemplates") if isinstance(answer, dict) else None
        if not isinstance(templates, list):
            self.put(check, "fail", _("resources/templates/list: {answer} has no "
                     "resourceTemplates array").format(answer=f"{answer!r:.200}"), evidence)
            return
        if not templates:
            self.skip([check], _("the server lists no resource templates"))
            return
        problems = []
        for template in templates:
            text = template.get("uriTemplate") if isinstance(template, dict) else None
            if not isinstance(text, str):
                problems.append(_("a template has no string uriTemplate"))
            elif (why := template_problem(text)) is not None:
                problems.append(f"{text!r} {why}")
        self.put(check, "fail" if problems else "pass",
                 "; ".join(problems[:5]) or _("{count} template(s) valid RFC 6570").format(
                     count=len(templates)),
                 evidence)
