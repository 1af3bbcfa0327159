"""The example suite of docs/testing.md, run as a user runs it: its files written to a fresh
folder, `pytest` started there with no API key, the plugin found through its entry point."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
DOC = ROOT / "docs" / "testing.md"
_FILE = re.compile(r"^# ([\w-]+\.(?:py|toml)): ")


def suite_files() -> dict[str, str]:
    """Each block whose first line names a file of the example suite (`# weather_app.py: ...`,
    as tests/test_docs.py reads it), by its file name."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    files: dict[str, str] = {}
    for i, line in enumerate(lines):
        if not line.startswith("```") or i + 1 >= len(lines):
            continue
        match = _FILE.match(lines[i + 1])
        if match is None:
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        files[match.group(1)] = "\n".join(lines[i + 1 : end]) + "\n"
    return files


def run_pytest(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL", "_AUTH_TOKEN")) and not k.startswith("AWS_")
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    files = suite_files()
    assert set(files) == {"pyproject.toml", "weather_app.py", "test_weather_app.py"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_documented_suite_runs_offline_with_the_plugins_fixtures(suite: Path) -> None:
    done = run_pytest(suite)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "6 passed" in done.stdout


def test_a_test_that_would_reach_a_real_provider_fails_clearly(suite: Path) -> None:
    (suite / "test_forgotten.py").write_text(
        "from weather_app import ask\n\n\n"
        "async def test_forgot_the_override():\n"
        "    await ask('What is the weather in Paris?')\n",
        encoding="utf-8",
    )
    done = run_pytest(suite)
    assert done.returncode == 1, done.stdout[-4000:]
    assert "1 failed, 6 passed" in done.stdout
    assert "ModelRequestsBlocked: a real model request to api.anthropic.com:443" in done.stdout
    assert "('claude-sonnet-4-6') was blocked" in done.stdout
