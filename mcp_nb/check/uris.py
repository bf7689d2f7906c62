"""Syntax checks for resource URIs (RFC 3986) and URI templates (RFC 6570), sans I/O.

Our own, and small, on purpose: the checkup only needs "is this string in the
grammar", not parsing or expansion; ``urllib.parse`` accepts nearly anything
(spaces, unbalanced brackets) and the maintained validators on PyPI either
pull in a dependency for one regular expression or, for templates, do not
validate at all (``uritemplate`` expands whatever it is given).  The grammars
are the RFCs' own ABNF, restricted to what tells a broken string from a good
one: the characters allowed, percent-escapes well formed, a scheme, and for
templates the expression syntax (operator, variable names, modifiers).

Example::

    >>> uri_problem("file:///project/src/main.rs") is None
    True
    >>> uri_problem("lab://bad uri")
    "has a character RFC 3986 does not allow: ' '"
    >>> template_problem("file:///{path}") is None
    True
    >>> template_problem("lab://echo/{text")
    'has an expression that is never closed'
"""

from __future__ import annotations

import re

from ..i18n import _

#: RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
#: unreserved / reserved (gen-delims and sub-delims) / "%" (checked apart as pct-encoded).
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
_PCT = re.compile(r"%(?![0-9A-Fa-f]{2})")

#: RFC 6570 §2.3: varchar = ALPHA / DIGIT / "_" / pct-encoded; varname = varchar *(["."] varchar)
_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = rf"{_VARCHAR}+(?:\.{_VARCHAR}+)*(?::[1-9][0-9]{{0,3}}|\*)?"
#: §2.2: expression = "{" [ operator ] variable-list "}" (the reserved operators =,!@| refused).
_EXPRESSION = re.compile(rf"[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*")
#: §2.1: literals are any character but CTL, SP, DQUOTE, "'", "%" (unless pct-encoded),
#: "<", ">", "\", "^", "`", "{", "|", "}".
_LITERAL_BANNED = re.compile(r"[\x00-\x20\x7f\"'<>\\^`{|}]")


def uri_problem(uri: str) -> str | None:
    """Why ``uri`` is not an RFC 3986 URI (None if it is): a scheme, then allowed characters."""
    if not _SCHEME.match(uri):
        return _("has no scheme (RFC 3986: scheme \":\" hier-part)")
    for char in uri:
        if not _URI_CHARS.fullmatch(char):
            return _("has a character RFC 3986 does not allow: {char}").format(char=repr(char))
    if _PCT.search(uri):
        return _("has a '%' not followed by two hex digits")
    return None


def template_problem(template: str) -> str | None:
    """Why ``template`` is not an RFC 6570 URI template (None if it is)."""
    position = 0
    while position < len(template):
        opening = template.find("{", position)
        literal = template[position:] if opening < 0 else template[position:opening]
        if (bad := _LITERAL_BANNED.search(literal)) is not None:
            return _("has a character a literal may not hold: {char}").format(
                char=repr(bad.group()))
        if _PCT.search(literal):
            return _("has a '%' not followed by two hex digits")
        if opening < 0:
            return None
        closing = template.find("}", opening)
        if closing < 0:
            return _("has an expression that is never closed")
        expression = template[opening + 1:closing]
        if not _EXPRESSION.fullmatch(expression):
            return _("has an expression RFC 6570 does not allow: {{{expression}}}").format(
                expression=expression)
        position = closing + 1
    return None


def template_variables(template: str) -> list[str]:
    """The variable names of a (valid) template, in order: ``{+a,b*}{?c}`` → a, b, c."""
    names = []
    for expression in re.findall(r"\{([^}]*)\}", template):
        for spec in expression.lstrip("+#./;?&").split(","):
            names.append(re.split(r"[:*]", spec, maxsplit=1)[0])
    return names
