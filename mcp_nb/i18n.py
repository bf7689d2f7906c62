"""The language the kit speaks to a learner: English, or Chinese for the zh edition.

Everything the kit prints for a person (widget tabs and legends, table headers,
status lines, the magics' refusals) goes through :func:`_`, the gettext
convention: the English text is the message id, and a catalog per language
(``mcp_nb/locale/<lang>/LC_MESSAGES/mcp_nb.po``, compiled to ``.mo`` beside it)
gives its translation.  English is the default and the fallback for any message
a catalog lacks (``tests/test_i18n.py`` fails when the zh catalog lacks one).

The language is one setting per process, which in Jupyter is one per notebook's
kernel: ``%mcp lang zh`` (the zh notebooks' first cell), :func:`set_language`,
or the ``MCP_NB_LANG`` environment variable before the kernel starts.

Texts with parts filled in are templates with named fields, so a translation can
put them in its own order::

    _("{count} tools").format(count=3)

What a server or the spec says (tool names, errors a server sent, method names,
state names such as ``Operating``, the spec's quoted sentences) is never
translated: the learner meets those words in the spec and on the wire.  Nor is
what the kit itself puts on the wire (an error it answers a server with, an
``elicitation`` action) or writes as data (a recording, ``--json`` output, a
change's ``kind``): those are read by programs, in any language.

Errors made below the notebook layer (``mcp_nb.client``, ``mcp_nb.transports``,
``mcp_nb.protocol``, ``mcp_nb.auth``), which a learner meets as a cell's error,
are translated **where the message is made**: ``raise SessionClosed(_("the
session is {state}; …").format(state=…))``.  The other way, translating
structured reasons at the notebook's boundary, was weighed and not taken: each
message is written once, beside the facts it names (a method, an id, a URL, a
timeout), and a boundary would need one reason code and one template per raise
site, two places to keep in step; exceptions that are caught and re-raised
(``ServerExited`` wrapping the transport's ``TransportClosed``) would lose their
words on the way.  It costs these layers nothing to stay usable without a
notebook: this module imports only the standard library, and outside a zh
kernel ``_`` hands back the English text.  A message is in the language chosen
when it was made (a log kept from before ``%mcp lang`` stays as it was).

>>> set_language("zh"); _("Lifecycle")
'生命周期'
>>> set_language("en"); _("Lifecycle")
'Lifecycle'
"""

from __future__ import annotations

import gettext
import os
from pathlib import Path

#: The languages the kit has catalogs for; "en" is the messages themselves.
LANGUAGES = ("en", "zh")
DOMAIN = "mcp_nb"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_catalogs: dict[str, gettext.NullTranslations] = {}
_current: gettext.NullTranslations | None = None
_language = "en"


def _catalog(language: str) -> gettext.NullTranslations:
    if language not in _catalogs:
        _catalogs[language] = (gettext.NullTranslations() if language == "en" else
                               gettext.translation(DOMAIN, LOCALE_DIR, languages=[language]))
    return _catalogs[language]


def set_language(language: str) -> None:
    """Speak ``language`` ("en" or "zh") from now on, in this process."""
    global _current, _language
    if language not in LANGUAGES:
        raise ValueError(f"no catalog for language {language!r}; the kit speaks "
                         f"{', '.join(LANGUAGES)}")
    _current, _language = _catalog(language), language


def language() -> str:
    """The language the kit speaks now."""
    _chosen()
    return _language


def _chosen() -> gettext.NullTranslations:
    """The catalog in use; the first time, the environment's choice (else English)."""
    if _current is None:
        wanted = os.environ.get("MCP_NB_LANG", "en")
        set_language(wanted if wanted in LANGUAGES else "en")
    assert _current is not None
    return _current


def N_(message: str) -> str:
    """Mark ``message`` for the catalogs without translating it yet (a constant's text).

    ``EMPTY = N_("(empty)")`` at import time; ``_(EMPTY)`` where it is shown, in the
    language of that moment.
    """
    return message


def _(message: str) -> str:
    """``message`` in the kit's language (itself in English, or where no translation exists).

    An empty message stays empty: gettext would answer it with the catalog's header (which
    names the tool that compiled the catalog), never something to show a person.
    """
    return _chosen().gettext(message) if message else message
