"""`examples/durable_agent.py`: one command on the emulator; run again, the run is not redone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from thinkagent.emulator import Emulator

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
    assert "dbos" not in done.stderr.lower(), done.stderr[-3000:]  # DBOS logs errors only
    return done.stdout


def test_the_durable_example_runs_and_a_second_run_asks_nothing_again(tmp_path: Path) -> None:
    first = run_example(tmp_path)
    assert "get_forecast -> rain tomorrow in Paris" in first
    assert "status: SUCCESS" in first
    assert "model requests sent by this process: 3" in first
    again = run_example(tmp_path)  # the same workflow id, the same SQLite file
    assert "model requests sent by this process: 0" in again
    assert again.split("status:")[1] == first.split("status:")[1].replace(": 3", ": 0")


def _proofs_and_thinking(emu: Emulator) -> set[str]:
    """Every signature and thinking text the example's requests sent back to the emulator."""
    found: set[str] = set()
    for request in emu.requests:
        for message in (request.body or {}).get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                for key in ("signature", "data", "thinking"):
                    value = block.get(key)
                    if isinstance(value, str) and len(value) > 20:
                        found.add(value)
    return found


def test_ctrl_c_mid_run_logs_no_proof_and_no_dbos_chatter(tmp_path: Path, emu: Emulator) -> None:
    # issue 26: 76 DBOS lines before the example's own, and on Ctrl-C a DBOS warning holding
    # the run's thinking and signatures
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "ACCESS_KEY_ID"))}
    env.update(
        ANTHROPIC_BASE_URL=emu.url,  # the example's "real service" branch, on this emulator
        ANTHROPIC_API_KEY="test-key-not-secret",
        FORECAST_SECONDS="60",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
    )
    example = subprocess.Popen(
        [sys.executable, str(EXAMPLE)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert example.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = example.stdout.readline()
            lines.append(line)
            if "get_forecast('Paris') running" in line or not line:
                break
        assert "get_forecast('Paris') running" in lines[-1], lines
        time.sleep(0.5)  # the forecast step is under way
        example.send_signal(signal.SIGINT)
        rest, errors = example.communicate(timeout=60)
    finally:
        if example.poll() is None:
            example.kill()
            example.wait()
    output = "".join(lines) + rest + errors
    assert example.returncode == 130, output
    assert "Interrupted: run the script again" in rest
    secrets = _proofs_and_thinking(emu)
    assert secrets, "the run sent its thinking back, so there is something to look for"
    leaked = [s[:40] for s in secrets if s in output or s[:40] in output]
    assert not leaked, output
    assert "dbos" not in output.lower(), output  # no DBOS log line at all at its ERROR level
    assert errors == "", errors
