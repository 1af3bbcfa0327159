"""`examples/compatible_endpoints.py` runs its loop on every dialect on the emulator (no keys)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent.parent.parent / "examples" / "compatible_endpoints.py"
KEYS = (
    "MOONSHOT_API_KEY",
    "ZAI_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "VLLM_BASE_URL",
)


def test_the_example_loops_on_every_endpoint() -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for name in ("kimi", "zai", "openrouter-gemini", "openrouter-claude", "deepseek", "vllm"):
        assert f"=== {name}:" in out
    assert out.count("answer: 'Here is what I found") == 8
    assert "thinking (signed, reasoning.text)" in out  # Claude's proofs behind OpenRouter
    assert "thinking (encrypted, reasoning.encrypted)" in out  # Gemini's thought signatures
