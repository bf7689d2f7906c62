"""Keep the kit's translation catalogs in step with the code (Babel does the reading and writing).

    python scripts/i18n.py            # extract _() messages, update the catalogs, compile .mo
    python scripts/i18n.py --check    # exit 1 and list what a catalog lacks or what is stale

Messages are the English texts passed to ``mcp_nb.i18n._`` (or marked with ``N_``) anywhere in
the package: every layer, from the protocol core's and the transports' errors to the notebook's
widgets; the MCP App frame's script gets its few words from Python (``AppFrame.labels``).
Updating keeps every translation whose English text is still used, adds new texts with
an empty translation (to be written by hand in the .po file) and drops texts no longer
used.  The .mo files are what gettext reads at run time; they are committed, compiled
from the .po files, and ``--check`` fails when one is stale: when its messages differ from the
.po's (never its bytes, which carry the Babel release that wrote them).
"""

from __future__ import annotations

import argparse
import io
import string
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mcp_nb"
LOCALE = PACKAGE / "locale"
TRANSLATED = ("zh",)
DOMAIN = "mcp_nb"


def extracted() -> dict[str, list[tuple[str, int]]]:
    """Every message id in the package, with where it is used."""
    found: dict[str, list[tuple[str, int]]] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
            PACKAGE, method_map=[("**.py", "python")], keywords={"_": None, "N_": None},
            comment_tags=(), strip_comment_tags=True):
        if isinstance(message, str) and message:
            found.setdefault(message, []).append((f"mcp_nb/{filename}", lineno))
    return found


def po_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(language: str) -> Catalog:
    path = po_path(language)
    if not path.exists():
        return Catalog(locale=language, domain=DOMAIN)
    with path.open("rb") as file:
        return read_po(file, locale=language, domain=DOMAIN)


def updated(language: str, messages: dict[str, list[tuple[str, int]]]) -> Catalog:
    old = read_catalog(language)
    # Dates kept from the catalog as it was, so that an update with nothing new changes
    # nothing; not fuzzy, or the compiled header (its charset) would be left out.
    catalog = Catalog(locale=language, domain=DOMAIN, project="mcp_nb", fuzzy=False,
                      header_comment=f"# The kit's messages in {language} (scripts/i18n.py).",
                      creation_date=old.creation_date, revision_date=old.revision_date)
    for message, locations in sorted(messages.items()):
        previous = old.get(message)
        catalog.add(message, previous.string if previous is not None else "",
                    locations=sorted(set(locations)))
    return catalog


def po_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, omit_header=False, sort_output=True,
             no_location=False)
    return buffer.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    return buffer.getvalue()


def translations(catalog: Catalog) -> dict[str, str]:
    """What a catalog says: each message id with its translation, the header left out.

    The compiled header names the Babel that wrote it (``Generated-By``), so two releases of
    Babel write different bytes for the same messages; a stale check compares this instead.
    """
    return {str(entry.id): str(entry.string) for entry in catalog if entry.id}


def compiled_translations(mo: Path) -> dict[str, str]:
    with mo.open("rb") as file:
        return translations(read_mo(file))


def fields(text: str) -> set[str]:
    """The ``{name}`` fields of a template (a translation must keep every one)."""
    return {name for _text, name, _spec, _conversion in string.Formatter().parse(text) if name}


def problems() -> list[str]:
    """What is missing or stale, one line each (empty: the catalogs are in step)."""
    messages = extracted()
    found = []
    for language in TRANSLATED:
        catalog = read_catalog(language)
        for message in sorted(messages):
            entry = catalog.get(message)
            if entry is None or not entry.string:
                where = ", ".join(f"{path}:{line}" for path, line in messages[message][:2])
                found.append(f"{language}: no translation of {message!r} ({where})")
            elif fields(entry.string) != fields(message):
                found.append(f"{language}: the translation of {message!r} has the fields "
                             f"{sorted(fields(entry.string))}, not {sorted(fields(message))}")
        for entry in catalog:
            if entry.id and entry.id not in messages:
                found.append(f"{language}: {entry.id!r} is no longer used")
        mo = po_path(language).with_suffix(".mo")
        if not mo.exists() or compiled_translations(mo) != translations(catalog):
            shown = mo.relative_to(ROOT) if mo.is_relative_to(ROOT) else mo
            found.append(f"{language}: {shown} is stale: run scripts/i18n.py")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say what is missing")
    args = parser.parse_args()
    if not args.check:
        messages = extracted()
        for language in TRANSLATED:
            catalog = updated(language, messages)
            path = po_path(language)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(po_bytes(catalog))
            # Compiled from the file as written, so the .mo matches what --check reads.
            path.with_suffix(".mo").write_bytes(mo_bytes(read_catalog(language)))
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
