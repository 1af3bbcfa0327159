"""A process that runs durable agents, for the tests that kill one (run as a script).

    worker.py run DB EMULATOR_URL WORKFLOW_ID OUT      run one agent run, write its history
    worker.py serve DB EMULATOR_URL EXECUTOR_ID         a queue worker, until SIGTERM/SIGKILL
    worker.py drive DB EMULATOR_URL OUT RUNS            enqueue RUNS runs, wait for the file
                                                        OUT.killed, recover worker-a's runs,
                                                        write every run's history to OUT

Environment: STREAM_DELTAS (stream the model requests, publish their deltas; `run` then writes
what a follower reads to OUT.events), SLOW_SECONDS (how long get_forecast sleeps), CALLS (a file each tool call appends
a line to: "<tool> <workflow id> <executor> start|end <time>"), NOT_IDEMPOTENT (tools listed,
comma-separated).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import anthropic
from dbos import DBOS

from thinkagent import Agent, RunContext, dump_messages
from thinkagent.durable import DurableAgent, idempotency_key, recover_runs
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking

PROMPT = "What's the weather and forecast in Paris?"
QUEUE = "agents"
WORKER_CONCURRENCY = 3
PROVIDER_CONCURRENCY = 5


def _log(tool: str, ctx: RunContext[None], what: str) -> None:
    calls = os.environ.get("CALLS")
    if calls:
        line = f"{tool} {idempotency_key(ctx)} {os.environ.get('EXECUTOR', '-')} {what} {time.time()}\n"
        with open(calls, "a") as file:
            file.write(line)


def get_weather(ctx: RunContext[None], city: str) -> str:
    """Current weather for a city."""
    _log("get_weather", ctx, "start")
    return f"sunny in {city}, 21 C"


async def get_forecast(ctx: RunContext[None], city: str) -> str:
    """Weather forecast for a city."""
    _log("get_forecast", ctx, "start")
    await asyncio.sleep(float(os.environ.get("SLOW_SECONDS", "0")))
    _log("get_forecast", ctx, "end")
    return f"rain tomorrow in {city}"


def agent(url: str) -> Agent:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="test-key", max_retries=0)
    model = AnthropicModel("claude-sonnet-4-6", client=client, thinking=ClaudeThinking.adaptive())
    return Agent(model, tools=[get_weather, get_forecast])


def durable(url: str) -> DurableAgent:
    listed = [name for name in os.environ.get("NOT_IDEMPOTENT", "").split(",") if name]
    deltas = bool(os.environ.get("STREAM_DELTAS"))
    return DurableAgent(agent(url), name="weather", not_idempotent=listed, stream_deltas=deltas)


def configure(db: str, **extra: object) -> None:
    DBOS(config={"name": "thinkagent-durable-tests", "system_database_url": db, **extra})  # type: ignore[typeddict-item]


async def run(db: str, url: str, workflow_id: str, out: str) -> None:
    configure(db)
    worker = durable(url)
    DBOS.launch()
    try:
        result = await worker.run(PROMPT, workflow_id=workflow_id)
        _write(out, dump_messages(result.messages))
        if os.environ.get("STREAM_DELTAS"):  # what a follower of the run reads
            events = [_describe(e) async for e in worker.retrieve(workflow_id).events()]
            _write(out + ".events", json.dumps(events))
    except Exception as exc:
        evidence = json.loads(dump_messages(getattr(exc, "messages", [])))
        error = {"type": type(exc).__name__, "message": str(exc), "messages": evidence}
        _write(out + ".error", json.dumps(error))
    finally:
        DBOS.destroy()


async def serve(db: str, url: str, executor_id: str) -> None:
    os.environ["EXECUTOR"] = executor_id
    configure(db, executor_id=executor_id, notification_listener_polling_interval_sec=0.05)
    durable(url)
    DBOS.launch()
    await DBOS.register_queue_async(
        QUEUE,
        worker_concurrency=WORKER_CONCURRENCY,
        partition_concurrency=PROVIDER_CONCURRENCY,
        polling_interval_sec=0.1,
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await stop.wait()
    DBOS.destroy()


async def drive(db: str, url: str, out: str, runs: int) -> None:
    configure(db, executor_id="driver", notification_listener_polling_interval_sec=0.05)
    DBOS.listen_queues([])  # enqueues and waits; the workers run
    worker = durable(url)
    DBOS.launch()
    try:
        await DBOS.register_queue_async(
            QUEUE,
            worker_concurrency=WORKER_CONCURRENCY,
            partition_concurrency=PROVIDER_CONCURRENCY,
            polling_interval_sec=0.1,
        )
        handles = [
            await worker.enqueue(PROMPT, queue=QUEUE, workflow_id=f"run-{i}") for i in range(runs)
        ]
        print("enqueued", flush=True)
        await asyncio.to_thread(_wait_for, Path(out + ".killed"))
        recovered = await recover_runs("worker-a", queue=QUEUE)
        results = {run.workflow_id: dump_messages((await run.result()).messages) for run in handles}
        statuses = {run.workflow_id: await run.status() for run in handles}
        _write(out, json.dumps({"recovered": recovered, "results": results, "statuses": statuses}))
    finally:
        DBOS.destroy()


def _describe(event: object) -> list[str]:
    code = getattr(event, "code", None)
    return [type(event).__name__, code or getattr(event, "text", None) or ""]


def _write(path: str, text: str) -> None:
    Path(path).write_text(text)


def _wait_for(path: Path) -> None:
    while not path.exists():
        time.sleep(0.05)


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "run":
        asyncio.run(run(*args))
    elif mode == "serve":
        asyncio.run(serve(*args))
    else:
        asyncio.run(drive(args[0], args[1], args[2], int(args[3])))
