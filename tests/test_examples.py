"""The demo scripts run end to end on the emulator (no keys) and show a verified replay."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import HAS_GENAI, needs_genai

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
        (
            "deepseek_thinking.py",
            "The `reasoning_content` in the thinking mode must be passed back",
        ),
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
    usage = re.findall(r"usage: \d+ in, \d+ out \((.*)\)", out)
    assert usage, out
    if script == "bedrock_thinking.py":  # Converse's usage has no thinking count
        assert set(usage) == {"thinking included, its count not reported"}
    else:
        assert all(re.fullmatch(r"\d+ thinking", u) for u in usage), usage


def test_the_gemini_demo_says_why_its_proofs_sit_on_the_text_and_the_call() -> None:
    if not HAS_GENAI:
        pytest.skip("google-genai 3 installs on Python 3.11 or newer")
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "gemini_thinking.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Gemini signs the part that follows its thoughts, not the thought summary" in done.stdout


# The family packages are the one import path docs and examples show; the old paths still work.
OLD_PATHS = re.compile(r"thinkagent\.providers\.(anthropic|bedrock|openai_responses) import")
# Retired or deprecated model names no example or doc block should start a reader on.
RETIRED = re.compile(
    r"[\"']((?:us\.anthropic\.)?claude-sonnet-4-5[\w.:-]*|deepseek-reasoner|deepseek-chat)[\"']"
)


def _sources() -> list[Path]:
    root = EXAMPLES.parent
    return [
        *EXAMPLES.rglob("*.py"),
        root / "README.md",
        *(p for p in (root / "docs").rglob("*.md") if "adr" not in p.parts),
    ]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_docs_and_examples_import_from_the_family_packages_and_name_current_models(
    path: Path,
) -> None:
    text = path.read_text(encoding="utf-8")
    code = (
        text if path.suffix == ".py" else "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    )
    assert not OLD_PATHS.search(code), f"{path.name} imports from an old path"
    assert not RETIRED.search(code), f"{path.name} names {RETIRED.search(code)[1]!r}"  # type: ignore[index]


def test_the_old_import_paths_still_work() -> None:
    from thinkagent.providers.anthropic import AnthropicModel
    from thinkagent.providers.bedrock import BedrockModel
    from thinkagent.providers.claude import AnthropicModel as FamilyAnthropic
    from thinkagent.providers.claude import BedrockModel as FamilyBedrock
    from thinkagent.providers.openai import OpenAIResponsesModel
    from thinkagent.providers.openai_responses import OpenAIResponsesModel as OldResponses

    assert (AnthropicModel, BedrockModel, OldResponses) == (
        FamilyAnthropic,
        FamilyBedrock,
        OpenAIResponsesModel,
    )
