"""The demo scripts run end to end on the emulator (no keys) and show a verified replay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import needs_genai

EXAMPLES = Path(__file__).parent.parent / "examples"
CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
)


@pytest.mark.parametrize(
    ("script", "refusal"),
    [
        ("thinking.py", "Invalid `signature` in `thinking` block"),
        ("bedrock_thinking.py", "Invalid `signature` in `thinking` block"),
        pytest.param("gemini_thinking.py", "Corrupted thought signature.", marks=needs_genai),
        ("openai_thinking.py", "could not be verified"),
        ("deepseek_thinking.py", "Missing `reasoning_content` field"),
    ],
)
def test_demo_runs_on_the_emulator(script: str, refusal: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Running on the thinkagent emulator" in out
    assert "  thinking" in out
    assert "tool call: check_answer" in out
    assert "accepted it: the run above completed" in out
    assert "Broken replay" in out
    assert refusal in out
