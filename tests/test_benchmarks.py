"""The benchmarks' own checks hold on a small scale: their figures live in `benchmarks/`, but a
check that no longer matches what the library does should fail here, not in a ten-minute run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .conftest import needs_genai

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@needs_genai
def test_a_small_soak_has_no_errors_and_no_invalid_histories() -> None:
    done = _run("soak.py", "--runs", "25", "--turns", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "25" in line]
    assert len(rows) == 5, done.stdout
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1:4] == ["25", "0", "0"], row


@needs_genai
def test_the_overhead_runner_measures_every_loop() -> None:
    """Every provider's four rows and, for its first, the agent loop alone and the minimal
    loop: each loop raises when it did not end with an answer after one tool call."""
    done = _run("overhead.py", "--iterations", "1", "--rounds", "1")
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: a row over its target
    assert "FAILED" not in done.stdout and "skipped" not in done.stdout, done.stdout
    rows = [
        line
        for line in done.stdout.splitlines()
        if re.match(r"\S+ +(json|streamed) (async|sync) +[\d.]+ms +[\d.]+ms", line)
    ]
    assert len(rows) == 5 * 4, done.stdout
    assert done.stdout.count("the agent loop alone") == 5, done.stdout
    assert done.stdout.count("the least an agent loop") == 5, done.stdout


@needs_genai
def test_the_long_history_benchmark_measures_every_wire_api() -> None:
    """A row per wire API with raw, thinkagent, the floor and the collector's work, on a short
    history (the targets hold at 1,000 messages only)."""
    done = _run("long_history.py", "--processes", "1", "--loops", "1", "--sizes", "12")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [
        line
        for line in done.stdout.splitlines()
        if re.match(r"\S+ +12 +[\d.]+ms +[\d.]+ms +[\d.]+ms +[\d.]+x +[\d.]+x", line)
    ]
    assert len(rows) == 7, done.stdout
