"""Suite-wide settings; the fixtures are in `tests/support/fixtures.py`.

The Gemini tests need `google-genai` 3, which needs Python 3.11+.
"""

from __future__ import annotations

import importlib.util

import pytest

pytest_plugins = ["tests.support.fixtures"]


def _has_genai() -> bool:
    try:
        return importlib.util.find_spec("google.genai") is not None
    except ModuleNotFoundError:
        return False


HAS_GENAI = _has_genai()
needs_genai = pytest.mark.skipif(
    not HAS_GENAI, reason="google-genai 3 is not installed (it needs Python 3.11+)"
)

collect_ignore_glob = [] if HAS_GENAI else ["gemini/*", "emulator/test_gemini*.py"]


def pytest_report_header() -> str | None:
    if HAS_GENAI:
        return None
    return (
        "google-genai is not installed (it needs Python 3.11+): the Gemini tests are not collected"
    )
