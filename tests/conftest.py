"""Shared pytest configuration."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    # Jupyter runs asyncio; that is the backend that matters.
    return "asyncio"
