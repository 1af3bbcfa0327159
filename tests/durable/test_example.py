"""`examples/durable_agent.py`: one command on the emulator; run again, the run is not redone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "durable_agent.py"


def run_example(cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "ACCESS_KEY_ID"))}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=cwd,
        env={**env, "FORECAST_SECONDS": "0", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_durable_example_runs_and_a_second_run_asks_nothing_again(tmp_path: Path) -> None:
    first = run_example(tmp_path)
    assert "get_forecast -> rain tomorrow in Paris" in first
    assert "status: SUCCESS" in first
    assert "model requests sent by this process: 3" in first
    again = run_example(tmp_path)  # the same workflow id, the same SQLite file
    assert "model requests sent by this process: 0" in again
    assert again.split("status:")[1] == first.split("status:")[1].replace(": 3", ": 0")
