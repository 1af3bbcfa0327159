"""The benchmarks' own checks hold on a small scale: their figures live in `benchmarks/`, but a
check that no longer matches what the library does should fail here, not in a ten-minute run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import needs_genai

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


@needs_genai
def test_a_small_soak_has_no_errors_and_no_invalid_histories() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "soak.py"), "--runs", "25", "--turns", "0"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "25" in line]
    assert len(rows) == 5, done.stdout
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1:4] == ["25", "0", "0"], row
