"""Every widget's two other faces: a short deterministic ``text/plain`` and a static HTML.

nbval compares ``text/plain``; nbviewer and GitHub show ``text/html``; a live widget
shows neither.  :class:`_Described` puts both into the widget's mime bundle, from the
widget's own :meth:`describe` and :meth:`static_html`, so a saved notebook reads the
same without a kernel.
"""

from __future__ import annotations

from typing import Any

from . import render


class _Described:
    """Mixin: deterministic text/plain and a static HTML fallback in the mime bundle."""

    def describe(self) -> str:  # pragma: no cover - every widget overrides
        raise NotImplementedError

    def static_html(self) -> str:
        return render.STYLE + f'<div class="mcpnb">{render.esc(self.describe())}</div>'

    def __repr__(self) -> str:
        return render.plain(self.describe())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs) or {}  # type: ignore[misc]
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = self.static_html()
        return bundle
