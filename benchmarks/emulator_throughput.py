"""Throughput of the emulator: non-streamed requests per second and streamed events per
second, so that it is never what a benchmark measures.

Runs ``python -m thinkagent.emulator`` in a separate process (pinned to one core where
the OS allows it) and drives it with lean keep-alive ``http.client`` connections from
this process (pinned to another core). Each phase is bounded in requests and in time.

    python benchmarks/emulator_throughput.py [--seconds 2] [--check]

``--check`` exits 1 when a figure is below its target (500 req/s, 20,000 events/s).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable

TARGET_REQUESTS = 500.0
TARGET_EVENTS = 20_000.0
MAX_REQUESTS = 20_000

ANTHROPIC_HEADERS = {
    "content-type": "application/json",
    "x-api-key": "bench",
    "anthropic-version": "2023-06-01",
}
BEDROCK_HEADERS = {
    "content-type": "application/json",
    "authorization": "AWS4-HMAC-SHA256 Credential=AKIABENCH/20250101/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=host, Signature=00",
}
OPENAI_HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}
GEMINI_HEADERS = {"content-type": "application/json", "x-goog-api-key": "bench"}
WEATHER_TOOL_SCHEMA = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
#: A long question: the visible thinking quotes it, so the stream carries many deltas.
LONG_QUESTION = " ".join(f"Consider point {i} about the weather in Paris." for i in range(60))


def pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and cpu < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {cpu})


def start_emulator() -> tuple[subprocess.Popen[str], str, int]:
    cpus = os.cpu_count() or 1
    prefix = (
        ["taskset", "-c", "0"]
        if cpus > 1 and sys.platform.startswith("linux") and _has("taskset")
        else []
    )
    process = subprocess.Popen(
        [*prefix, sys.executable, "-m", "thinkagent.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    match = re.search(r"http://([\d.]+):(\d+)", first)
    if match is None:
        process.kill()
        raise SystemExit(f"the emulator did not start: {first!r}")
    return process, match.group(1), int(match.group(2))


def _has(program: str) -> bool:
    return any(
        os.access(os.path.join(p, program), os.X_OK)
        for p in os.environ.get("PATH", "").split(os.pathsep)
    )


def measure(
    host: str,
    port: int,
    path: str,
    body: bytes,
    headers: dict[str, str],
    count: Callable[[bytes], int],
    seconds: float,
) -> tuple[float, float, int]:
    """(requests/s, events/s, requests) over one keep-alive connection."""
    connection = http.client.HTTPConnection(host, port, timeout=30)
    for _ in range(20):  # warm up
        connection.request("POST", path, body=body, headers=headers)
        connection.getresponse().read()
    requests = events = 0
    started = time.perf_counter()
    deadline = started + seconds
    while requests < MAX_REQUESTS:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        if response.status != 200:
            raise SystemExit(f"{path}: HTTP {response.status}: {payload[:200]!r}")
        events += count(payload)
        requests += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - started
    connection.close()
    return requests / elapsed, events / elapsed, requests


def sse_events(payload: bytes) -> int:
    return payload.count(b"\n\n") or payload.count(b"\r\n\r\n")


def eventstream_messages(payload: bytes) -> int:
    count = position = 0
    while position + 4 <= len(payload):
        position += int.from_bytes(payload[position : position + 4], "big")
        count += 1
    return count


Phase = tuple[str, str, bytes, dict[str, str], Callable[[bytes], int]]


def _json(body: dict[str, object]) -> bytes:
    return json.dumps(body).encode()


def _phases() -> list[Phase]:
    """(name, path, body, headers, event counter) for each wire API, JSON and streamed."""
    no_events: Callable[[bytes], int] = lambda _: 0  # noqa: E731
    claude_thinking = {"type": "enabled", "budget_tokens": 4096}
    weather_question = "What's the weather in Paris?"
    chat_tool = {"type": "function", "function": {**WEATHER_TOOL_SCHEMA}}
    responses_tool = {"type": "function", **WEATHER_TOOL_SCHEMA}
    gemini_body = {
        "contents": [{"role": "user", "parts": [{"text": LONG_QUESTION}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
    }
    return [
        (
            "Anthropic JSON, plain answer",
            "/v1/messages",
            _json(
                {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 256,
                    "messages": [{"role": "user", "content": "Hello"}],
                }
            ),
            ANTHROPIC_HEADERS,
            no_events,
        ),
        (
            "Anthropic JSON, thinking + tool call",
            "/v1/messages",
            _json(
                {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 4096,
                    "thinking": {"type": "enabled", "budget_tokens": 2048},
                    "tools": [WEATHER_TOOL],
                    "messages": [{"role": "user", "content": weather_question}],
                }
            ),
            ANTHROPIC_HEADERS,
            no_events,
        ),
        (
            "OpenAI Responses JSON, reasoning + tool call",
            "/v1/responses",
            _json(
                {
                    "model": "gpt-5",
                    "input": weather_question,
                    "tools": [responses_tool],
                    "reasoning": {"effort": "low", "summary": "auto"},
                    "include": ["reasoning.encrypted_content"],
                    "store": False,
                }
            ),
            OPENAI_HEADERS,
            no_events,
        ),
        (
            "Anthropic SSE, long thinking + answer",
            "/v1/messages",
            _json(
                {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 8192,
                    "stream": True,
                    "thinking": claude_thinking,
                    "messages": [{"role": "user", "content": LONG_QUESTION}],
                }
            ),
            ANTHROPIC_HEADERS,
            sse_events,
        ),
        (
            "Bedrock event-stream, long thinking + answer",
            "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream",
            _json(
                {
                    "messages": [{"role": "user", "content": [{"text": LONG_QUESTION}]}],
                    "additionalModelRequestFields": {"thinking": claude_thinking},
                }
            ),
            BEDROCK_HEADERS,
            eventstream_messages,
        ),
        (
            "Gemini SSE, long thoughts + answer",
            "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse",
            _json(gemini_body),
            GEMINI_HEADERS,
            sse_events,
        ),
        (
            "OpenAI chat SSE (DeepSeek dialect), long reasoning",
            "/v1/chat/completions",
            _json(
                {
                    "model": "deepseek-reasoner",
                    "stream": True,
                    "tools": [chat_tool],
                    "messages": [{"role": "user", "content": LONG_QUESTION}],
                }
            ),
            OPENAI_HEADERS,
            sse_events,
        ),
        (
            "OpenAI Responses SSE, long reasoning summary",
            "/v1/responses",
            _json(
                {
                    "model": "gpt-5",
                    "input": LONG_QUESTION,
                    "stream": True,
                    "reasoning": {"effort": "high", "summary": "detailed"},
                    "include": ["reasoning.encrypted_content"],
                    "store": False,
                }
            ),
            OPENAI_HEADERS,
            sse_events,
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="duration of each phase (default 2)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when below the targets")
    args = parser.parse_args()

    phases = _phases()
    process, host, port = start_emulator()
    pin(1)
    try:
        rows = [
            (name, measure(host, port, path, body, headers, count, args.seconds))
            for name, path, body, headers, count in phases
        ]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)

    print(f"emulator throughput (server on one core, {args.seconds:g} s per phase)")
    for name, (rps, eps, n) in rows:
        events = f"{eps:>10,.0f} events/s" if eps else " " * 19
        print(f"  {name:<52} {rps:>8,.0f} req/s {events}  ({n} requests)")
    worst_rps = min(rps for _, (rps, eps, _) in rows if not eps)
    worst_eps = min(eps for _, (_, eps, _) in rows if eps)
    ok = worst_rps >= TARGET_REQUESTS and worst_eps >= TARGET_EVENTS
    print(
        f"targets: >= {TARGET_REQUESTS:,.0f} req/s non-streamed, >= {TARGET_EVENTS:,.0f} events/s streamed: "
        + ("met" if ok else "NOT met")
    )
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
