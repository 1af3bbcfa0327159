"""Durable runs across processes: a SIGKILLed process's run resumed by a new one (SQLite), and
queue workers sharing runs on Postgres, one killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from thinkagent import Agent, dump_messages, load_messages, validate_history
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

HERE = Path(__file__).parent
WORKER = HERE / "worker.py"
PROMPT = "What's the weather and forecast in Paris?"


def spawn(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 60) -> str:
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"the worker did not finish in {timeout} s:\n{output[-3000:]}")
    assert process.returncode == 0, output[-3000:]
    return output


def kill(process: subprocess.Popen[str]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def wait_for(predicate: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def calls(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def reference_history() -> str:
    """The same run, not durable, in this process, on a fresh emulator."""
    from tests.durable.worker import get_forecast, get_weather  # the same tools

    with Emulator() as fresh:
        model = AnthropicModel(
            "claude-sonnet-4-6",
            client=fresh.anthropic_client(api_key="test-key", max_retries=0),
            thinking=ClaudeThinking.adaptive(),
        )
        result = Agent(model, tools=[get_weather, get_forecast]).run_sync(PROMPT)
    return dump_messages(result.messages)


def first_request_count(emu: Emulator) -> int:
    return sum(1 for r in emu.requests if r.api == "anthropic" and len(r.body["messages"]) == 1)


def test_a_run_killed_mid_tool_is_resumed_by_a_new_process_without_asking_again(
    tmp_path: Path, emu: Emulator
) -> None:
    db, log, out = f"sqlite:///{tmp_path / 'dbos.sqlite'}", tmp_path / "calls", tmp_path / "out"
    crashing = spawn(
        "run", db, emu.url, "conversation-1", str(out), SLOW_SECONDS="300", CALLS=str(log)
    )
    wait_for(
        lambda: any(c[0] == "get_forecast" for c in calls(log)) or crashing.poll() is not None,
        "the slow tool",
    )
    assert crashing.poll() is None, crashing.communicate()[0][-3000:]
    kill(crashing)  # SIGKILL while the slow tool runs
    sent_before = len(emu.requests)
    assert sent_before == 2

    finish(spawn("run", db, emu.url, "conversation-1", str(out), CALLS=str(log)))

    bodies = [json.dumps(r.body, sort_keys=True) for r in emu.requests if r.api == "anthropic"]
    assert first_request_count(emu) == 1  # the first thinking turn was paid for once
    assert len(bodies) == len(set(bodies)) == 3  # no request sent twice
    history = out.read_text()
    assert history == reference_history()  # byte for byte, signatures included
    validate_history(load_messages(history))
    tools = [(c[0], c[1], c[3]) for c in calls(log)]
    weather = [t for t in tools if t[0] == "get_weather"]
    forecast = [t for t in tools if t[0] == "get_forecast" and t[2] == "start"]
    assert len(weather) == 1  # completed before the kill: not run again
    assert len(forecast) == 2 and forecast[0][1] == forecast[1][1]  # rerun, same idempotency key


def test_a_request_streaming_when_its_process_died_is_sent_again_and_no_partial_is_kept(
    tmp_path: Path, emu: Emulator
) -> None:
    db, out = f"sqlite:///{tmp_path / 'dbos.sqlite'}", tmp_path / "out"
    emu.inject(Fault.slow(0.15, api="anthropic"))  # the first request streams slowly
    crashing = spawn("run", db, emu.url, "c", str(out), STREAM_DELTAS="1")
    wait_for(lambda: len(emu.requests) == 1 or crashing.poll() is not None, "the first request")
    time.sleep(1.0)  # some deltas are published, the response is not complete
    kill(crashing)

    finish(spawn("run", db, emu.url, "c", str(out), STREAM_DELTAS="1"))

    assert first_request_count(emu) == 2  # the interrupted request, sent again
    assert len(emu.requests) == 4
    history = out.read_text()
    assert history == reference_history()  # the partial never entered the history
    events = json.loads(Path(f"{out}.events").read_text())
    restarted = events.index(["WarningEvent", "request_restarted"])
    first = next(i for i, e in enumerate(events) if e[0] == "ModelResponse")
    assert 0 < restarted < first  # partial deltas, the restart, then the request's deltas
    thinking = "".join(e[1] for e in events[restarted:first] if e[0] == "ThinkingDelta")
    assert thinking == load_messages(history)[1].thinking[0].text


def test_a_tool_marked_not_idempotent_is_not_run_again_after_a_crash(
    tmp_path: Path, emu: Emulator
) -> None:
    db, log, out = f"sqlite:///{tmp_path / 'dbos.sqlite'}", tmp_path / "calls", tmp_path / "out"
    env = {"CALLS": str(log), "NOT_IDEMPOTENT": "get_forecast"}
    crashing = spawn("run", db, emu.url, "c", str(out), SLOW_SECONDS="300", **env)
    wait_for(
        lambda: any(c[0] == "get_forecast" for c in calls(log)) or crashing.poll() is not None,
        "the slow tool",
    )
    kill(crashing)

    finish(spawn("run", db, emu.url, "c", str(out), **env))

    error = json.loads(Path(f"{out}.error").read_text())
    assert error["type"] == "ToolInterrupted"
    assert error["message"].startswith("workflow 'c', step ")
    assert "tool 'get_forecast' (call 'toolu_" in error["message"]
    assert "marked not idempotent, so it was not run again" in error["message"]
    evidence = load_messages(json.dumps(error["messages"]))
    assert [c.name for c in evidence[-1].tool_calls] == ["get_forecast"]  # up to the call
    assert [c[0] for c in calls(log) if c[3] == "start"] == ["get_weather", "get_forecast"]
    assert len(emu.requests) == 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres() -> Iterator[str]:
    """A private PostgreSQL server (`postgres.sh`), skipped only where none can run."""
    started = subprocess.run(
        ["bash", str(HERE / "postgres.sh"), "start", str(free_port())],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if started.returncode == 3:
        pytest.skip(f"no PostgreSQL server to start: {started.stderr.strip()}")
    assert started.returncode == 0, started.stderr
    url, directory = started.stdout.split()
    yield url.rsplit("/", 1)[0] + "/thinkagent_durable"
    subprocess.run(["bash", str(HERE / "postgres.sh"), "stop", directory], timeout=60, check=False)


def test_queue_workers_on_postgres_share_the_runs_and_recover_a_killed_one(
    tmp_path: Path, postgres: str, emu: Emulator
) -> None:
    from tests.durable.worker import PROVIDER_CONCURRENCY, WORKER_CONCURRENCY

    log, out, runs = tmp_path / "calls", tmp_path / "out", 20
    env = {"CALLS": str(log), "SLOW_SECONDS": "0.4"}
    # The driver creates the system database and the queue, then enqueues.
    driver = spawn("drive", postgres, emu.url, str(out), str(runs), **env)
    assert driver.stdout is not None
    wait_for(
        lambda: "enqueued" in (driver.stdout.readline() if driver.poll() is None else "enqueued"),
        "the runs to be enqueued",
    )
    workers = {
        name: spawn("serve", postgres, emu.url, name, **env) for name in ("worker-a", "worker-b")
    }
    try:
        wait_for(
            lambda: any(c[2] == "worker-a" and c[0] == "get_forecast" for c in calls(log)),
            "worker-a to run a tool",
        )
        kill(workers["worker-a"])  # mid-run: its slow tool is running
        Path(f"{out}.killed").touch()  # the supervisor notices: the driver recovers its runs
        finish(driver, timeout=90)
    finally:
        for process in workers.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)

    report = json.loads(out.read_text())
    assert report["recovered"]  # worker-a had runs in flight
    assert set(report["statuses"].values()) == {"SUCCESS"}
    expected = reference_history()
    assert len(report["results"]) == runs
    for history in report["results"].values():
        validate_history(load_messages(history))
        assert history == expected  # each run completed once, with the whole evidence
    entries = calls(log)
    # Exactly once where it matters: every completed call belongs to one run's step.
    finished = [(c[1]) for c in entries if c[0] == "get_forecast" and c[3] == "end"]
    assert sorted(set(finished)) == sorted(finished) and len(finished) == runs
    assert {c[2] for c in entries} == {"worker-a", "worker-b"}  # both shared the load
    # The limits held: per worker, and per provider across the workers.
    spans: dict[str, list[tuple[float, float, str]]] = {}
    starts = {
        (c[1]): (float(c[4]), c[2]) for c in entries if c[0] == "get_forecast" and c[3] == "start"
    }
    for c in entries:
        if c[0] == "get_forecast" and c[3] == "end":
            begin, worker = starts[c[1]]
            spans.setdefault(worker, []).append((begin, float(c[4]), worker))

    def peak(intervals: list[tuple[float, float, str]]) -> int:
        return max(sum(1 for b, e, _ in intervals if b <= t < e) for t, _, _ in intervals)

    assert peak(spans["worker-b"]) <= WORKER_CONCURRENCY
    assert peak([s for group in spans.values() for s in group]) <= PROVIDER_CONCURRENCY
