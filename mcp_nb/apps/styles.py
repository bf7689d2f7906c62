"""``hostContext.styles``: the host's theme as the spec's CSS variables (MCP Apps 2026-01-26,
"Theming").

A host MAY pass any subset of the standardized variables in ``hostContext.styles.variables``;
a View uses them (``var(--color-background-primary)``) with its own fallbacks. This host takes
them from the notebook's own theme: each spec variable is read in the page from the JupyterLab
CSS variable that plays the same part (:data:`JUPYTERLAB_SOURCES`), so an App matches light and
dark, and follows a theme switch (``ui/notifications/host-context-changed`` carries the new
values). Variables JupyterLab has no counterpart for (font weights, heading sizes, most radii)
are left out: the View's fallbacks apply to them.

The values are the current theme's, not ``light-dark()`` pairs (the spec's suggestion): the page
knows only the theme in force, and ``theme`` plus a change notification say when it flips.
What the page reports is checked here: only the spec's keys, only short strings without the
characters that could end a declaration (a ``;``, a brace, ``<``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The spec's standardized variable names (McpUiStyleVariableKey, 2026-01-26).
STYLE_KEYS = frozenset(
    [f"--color-background-{k}" for k in (
        "primary", "secondary", "tertiary", "inverse", "ghost", "info", "danger", "success",
        "warning", "disabled")]
    + [f"--color-text-{k}" for k in (
        "primary", "secondary", "tertiary", "inverse", "info", "danger", "success", "warning",
        "disabled", "ghost")]
    + [f"--color-border-{k}" for k in (
        "primary", "secondary", "tertiary", "inverse", "ghost", "info", "danger", "success",
        "warning", "disabled")]
    + [f"--color-ring-{k}" for k in (
        "primary", "secondary", "inverse", "info", "danger", "success", "warning")]
    + ["--font-sans", "--font-mono"]
    + [f"--font-weight-{k}" for k in ("normal", "medium", "semibold", "bold")]
    + [f"--font-text-{k}-size" for k in ("xs", "sm", "md", "lg")]
    + [f"--font-heading-{k}-size" for k in ("xs", "sm", "md", "lg", "xl", "2xl", "3xl")]
    + [f"--font-text-{k}-line-height" for k in ("xs", "sm", "md", "lg")]
    + [f"--font-heading-{k}-line-height" for k in ("xs", "sm", "md", "lg", "xl", "2xl", "3xl")]
    + [f"--border-radius-{k}" for k in ("xs", "sm", "md", "lg", "xl", "full")]
    + ["--border-width-regular", "--shadow-hairline", "--shadow-sm", "--shadow-md",
       "--shadow-lg"])

#: Spec variable → the JupyterLab theme variable the page reads it from (both themes that ship
#: with JupyterLab, and Notebook 7, define these on the page's body).
JUPYTERLAB_SOURCES: dict[str, str] = {
    "--color-background-primary": "--jp-layout-color0",
    "--color-background-secondary": "--jp-layout-color1",
    "--color-background-tertiary": "--jp-layout-color2",
    "--color-background-inverse": "--jp-inverse-layout-color0",
    "--color-background-info": "--jp-info-color3",
    "--color-background-danger": "--jp-error-color3",
    "--color-background-success": "--jp-success-color3",
    "--color-background-warning": "--jp-warn-color3",
    "--color-background-disabled": "--jp-layout-color3",
    "--color-text-primary": "--jp-content-font-color1",
    "--color-text-secondary": "--jp-content-font-color2",
    "--color-text-tertiary": "--jp-content-font-color3",
    "--color-text-inverse": "--jp-inverse-content-font-color1",
    "--color-text-info": "--jp-info-color0",
    "--color-text-danger": "--jp-error-color0",
    "--color-text-success": "--jp-success-color0",
    "--color-text-warning": "--jp-warn-color0",
    "--color-text-disabled": "--jp-ui-font-color3",
    "--color-text-ghost": "--jp-ui-font-color3",
    "--color-border-primary": "--jp-border-color1",
    "--color-border-secondary": "--jp-border-color2",
    "--color-border-tertiary": "--jp-border-color3",
    "--color-border-info": "--jp-info-color1",
    "--color-border-danger": "--jp-error-color1",
    "--color-border-success": "--jp-success-color1",
    "--color-border-warning": "--jp-warn-color1",
    "--color-border-disabled": "--jp-border-color3",
    "--color-ring-primary": "--jp-brand-color1",
    "--color-ring-secondary": "--jp-brand-color2",
    "--color-ring-info": "--jp-info-color1",
    "--color-ring-danger": "--jp-error-color1",
    "--color-ring-success": "--jp-success-color1",
    "--color-ring-warning": "--jp-warn-color1",
    "--font-sans": "--jp-ui-font-family",
    "--font-mono": "--jp-code-font-family",
    "--font-text-xs-size": "--jp-ui-font-size0",
    "--font-text-sm-size": "--jp-ui-font-size1",
    "--font-text-md-size": "--jp-content-font-size1",
    "--font-text-lg-size": "--jp-ui-font-size2",
    "--font-text-md-line-height": "--jp-content-line-height",
    "--border-radius-sm": "--jp-border-radius",
    "--border-width-regular": "--jp-border-width",
    "--shadow-sm": "--jp-elevation-z1",
    "--shadow-md": "--jp-elevation-z4",
    "--shadow-lg": "--jp-elevation-z8",
}
assert set(JUPYTERLAB_SOURCES) <= STYLE_KEYS

#: The longest value kept (a font stack or a shadow is well under this).
MAX_VALUE = 300
_UNSAFE = frozenset(";{}<>\\")


def host_styles(reported: Any) -> dict[str, Any] | None:
    """``hostContext.styles`` from what the page read (spec key → value), or None if nothing
    usable came: unknown keys, non-strings, empty, long or unsafe values are left out."""
    if not isinstance(reported, Mapping):
        return None
    variables = {key: value.strip() for key, value in reported.items()
                 if key in STYLE_KEYS and isinstance(value, str) and value.strip()
                 and len(value) <= MAX_VALUE and not _UNSAFE & set(value)}
    return {"variables": dict(sorted(variables.items()))} if variables else None
