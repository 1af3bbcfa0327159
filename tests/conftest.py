"""Suite-wide fixtures and settings.

`emu`: one emulator per test module, reset (requests, scripts, faults) before each test that
uses it. The Gemini tests need `google-genai` 3, which needs Python 3.11+.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from thinkagent.emulator import Emulator


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator


@pytest.fixture(autouse=True)
def _fresh(request: pytest.FixtureRequest) -> None:
    if "emu" in request.fixturenames:
        request.getfixturevalue("emu").reset()


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
