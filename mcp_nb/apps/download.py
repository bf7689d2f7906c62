"""``ui/download-file`` (MCP Apps draft revision): what an App asks to save, checked, sans I/O.

An App runs in a sandbox without ``allow-downloads``; it asks the host instead, with
``params.contents``: standard MCP content, an ``EmbeddedResource`` (``{"type": "resource",
"resource": {"uri", "mimeType", "text" | "blob"}}``) or a ``ResourceLink`` (the host fetches
the URI). The draft's host rules: SHOULD ask the person before downloading; SHOULD derive the
file's name from the last segment of ``resource.uri``; MAY refuse by policy or size; SHOULD
sanitize names against path traversal. The answer is ``{}``, or an error (``-32000``).

This host saves into the notebook's folder, only after the person clicks *Save* in the cell
(:mod:`mcp_nb.notebook.app_download`). Here: the request's check and the names.

* only embedded content: a ``ResourceLink`` is refused (the kernel would fetch a URL the App
  chose, from the kernel's network, which the App's CSP never allowed it to reach);
* at most :data:`MAX_FILES` files and :data:`MAX_BYTES` in all, decoded;
* a name is the URI's last segment, percent-decoded, with anything but letters, digits,
  ``.``, ``-``, ``_`` and space replaced by ``_``, no leading dot (no hidden file, no ``..``),
  at most :data:`MAX_NAME` characters; an empty one becomes ``download``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

#: The most one request may save, decoded (an App's message also crosses the page's relay).
MAX_BYTES = 4 * 1024 * 1024
MAX_FILES = 10
MAX_NAME = 120
_NOT_SAFE = re.compile(r"[^\w.\- ]", re.UNICODE)


@dataclass(frozen=True)
class DownloadFile:
    """One file an App asks to save: its sanitized name, type and bytes."""

    name: str
    mime_type: str
    data: bytes
    #: The URI the App gave (shown beside the name, so a renamed file can be told).
    uri: str


def safe_name(uri: str) -> str:
    """The file name for ``uri``: its last path segment, sanitized (never a path)."""
    path = urlsplit(uri).path if "://" in uri or uri.startswith("file:") else uri
    segment = unquote(path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])
    name = _NOT_SAFE.sub("_", segment).strip(" ").lstrip(".")
    name = name[:MAX_NAME].rstrip(" ")
    return name or "download"


def _file(item: Any) -> DownloadFile | str:
    if not isinstance(item, Mapping):
        return "Invalid content: an item of contents is not an object"
    if item.get("type") == "resource_link":
        return ("Policy violation: this host saves only embedded content (type \"resource\"); "
                "it does not fetch a URL for an App")
    resource = item.get("resource")
    if item.get("type") != "resource" or not isinstance(resource, Mapping):
        return "Invalid content: an item is not an EmbeddedResource (type \"resource\")"
    uri = resource.get("uri")
    if not isinstance(uri, str) or not uri:
        return "Invalid content: the resource has no uri to name the file by"
    text, blob = resource.get("text"), resource.get("blob")
    if isinstance(text, str):
        data = text.encode("utf-8")
    elif isinstance(blob, str):
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            return "Invalid content: blob is not base64"
    else:
        return "Invalid content: the resource has neither text nor blob"
    mime = resource.get("mimeType")
    return DownloadFile(safe_name(uri), mime if isinstance(mime, str) else "", data, uri)


def check_request(params: Mapping[str, Any]) -> list[DownloadFile] | str:
    """The files ``ui/download-file`` asks to save, or why the host refuses (one sentence,
    worded as the draft's error messages are)."""
    contents = params.get("contents")
    if not isinstance(contents, list) or not contents:
        return "Invalid content: params.contents must be a non-empty array"
    if len(contents) > MAX_FILES:
        return f"Policy violation: at most {MAX_FILES} files per request"
    files: list[DownloadFile] = []
    for item in contents:
        checked = _file(item)
        if isinstance(checked, str):
            return checked
        files.append(checked)
    total = sum(len(f.data) for f in files)
    if total > MAX_BYTES:
        return (f"Policy violation: {total} bytes asked, this host saves at most {MAX_BYTES} "
                "per request")
    return files
