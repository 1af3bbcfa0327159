"""The Emulator's lifecycle, its client factories, request recording, and the command line."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import anthropic
import boto3
import openai
import pytest

from thinkagent.emulator import Emulator, Fault, RecordedRequest
from thinkagent.emulator.recording import MAX_RECORDED

from ..conftest import HAS_GENAI, needs_genai

if HAS_GENAI:
    from google import genai

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

HELLO: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hello"}],
}


def emulator_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("thinkagent-emulator")]


def test_sync_context_manager_binds_and_leaves_no_thread() -> None:
    before = len(emulator_threads())
    with Emulator() as emu:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", emu.url)
        assert len(emulator_threads()) == before + 1
        connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
        connection.request("GET", "/nowhere")
        assert connection.getresponse().status == 404
        connection.close()
    assert len(emulator_threads()) == before
    assert not emu.running
    with pytest.raises(RuntimeError):
        _ = emu.url


async def test_usable_inside_a_running_loop_sync_and_async() -> None:
    with Emulator() as emu:  # as the acceptance checks use it
        client = emu.anthropic_client(max_retries=0)
        assert (await client.messages.create(**HELLO)).stop_reason == "end_turn"
        await client.close()
    async with Emulator() as emu2:
        client = emu2.anthropic_client(max_retries=0)
        assert (await client.messages.create(**HELLO)).stop_reason == "end_turn"
        await client.close()
    assert emulator_threads() == []


def test_start_close_are_idempotent_and_a_port_can_be_chosen() -> None:
    emu = Emulator()
    assert emu.start() is emu.start()
    port = emu.port
    emu.close()
    emu.close()
    with Emulator(port=port) as again:
        assert again.url.endswith(f":{port}")
        with pytest.raises(OSError, match="in use"), Emulator(port=port):
            pass


@needs_genai
async def test_client_factories_point_at_the_emulator() -> None:
    async with Emulator() as emu:
        a = emu.anthropic_client(max_retries=5)
        assert isinstance(a, anthropic.AsyncAnthropic)
        assert a.max_retries == 5
        assert str(a.base_url).rstrip("/") == emu.url
        o = emu.openai_client()
        assert isinstance(o, openai.AsyncOpenAI)
        assert str(o.base_url).rstrip("/") == emu.url + "/v1"
        az = emu.azure_client()
        assert isinstance(az, openai.AsyncAzureOpenAI)
        assert isinstance(emu.gemini_client(), genai.Client)
        assert isinstance(emu.vertex_client(), genai.Client)
        assert emu.bedrock_client().meta.endpoint_url == emu.url
        assert emu.endpoints["OpenAI"] == emu.url + "/v1"
        assert set(emu.endpoints) == {
            "Anthropic",
            "Bedrock",
            "Gemini",
            "Vertex",
            "OpenAI",
            "Azure",
        }

        # Each factory's client is served: its request succeeds.
        for call in (
            o.with_options(max_retries=0).chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "hi"}]
            ),
            az.with_options(max_retries=0).chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "hi"}]
            ),
        ):
            completion = await call
            assert completion.choices[0].finish_reason == "stop"
            assert completion.choices[0].message.content
        for client in (emu.gemini_client(), emu.vertex_client()):
            response = await client.aio.models.generate_content(
                model="gemini-2.5-flash", contents="hi"
            )
            assert response.text
            await client.aio.aclose()
        paths = [(r.path, r.auth) for r in emu.requests]
        assert paths == [
            ("/v1/chat/completions", "Bearer"),
            ("/openai/deployments/gpt-5/chat/completions", "api-key"),
            ("/v1beta/models/gemini-2.5-flash:generateContent", "x-goog-api-key"),
            (
                "/v1beta1/projects/emulator-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
                "Bearer",
            ),
        ]
        assert emu.requests[1].query == {"api-version": "2025-04-01-preview"}
        await a.close()
        await o.close()
        await az.close()


@needs_genai
async def test_recording_strips_credentials() -> None:
    secrets = [
        "sk-ant-SECRET-1",
        "AKIASECRET2",
        "aws-secret-3",
        "session-token-4",
        "goog-secret-5",
        "azure-secret-6",
    ]
    async with Emulator() as emu:
        client = emu.anthropic_client(api_key=secrets[0], max_retries=0)
        await client.messages.create(**HELLO)
        await client.close()
        bedrock = emu.bedrock_client(
            aws_access_key_id=secrets[1],
            aws_secret_access_key=secrets[2],
            aws_session_token=secrets[3],
        )
        await asyncio.to_thread(
            bedrock.converse,
            modelId="anthropic.claude-haiku-4-5-20251001-v1:0",
            messages=[{"role": "user", "content": [{"text": "Hello"}]}],
        )
        gemini = emu.gemini_client(api_key=secrets[4])
        assert (
            await gemini.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
        ).text
        await gemini.aio.aclose()
        az = emu.azure_client(api_key=secrets[5], max_retries=0)
        completion = await az.chat.completions.create(
            model="gpt-5", messages=[{"role": "user", "content": "hi"}]
        )
        assert completion.choices[0].message.content
        await az.close()
        recorded = emu.requests
        assert [r.api for r in recorded] == ["anthropic", "bedrock", "gemini", "openai"]
        assert [r.auth for r in recorded] == [
            "Bearer",
            "AWS4-HMAC-SHA256",
            "x-goog-api-key",
            "api-key",
        ]
        text = repr(recorded)
        for secret in secrets:
            assert secret not in text
        for r in recorded:
            assert not {
                "authorization",
                "x-api-key",
                "api-key",
                "x-goog-api-key",
                "x-amz-security-token",
            } & set(r.headers)
        assert recorded[0].body == HELLO
        assert recorded[0].headers["anthropic-version"]
        assert isinstance(recorded[0], RecordedRequest)
        emu.clear()
        assert emu.requests == []


def test_recording_is_thread_safe() -> None:
    with Emulator() as emu:

        def hammer() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
            for _ in range(25):
                connection.request(
                    "POST",
                    "/v1/messages",
                    body=json.dumps(HELLO),
                    headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
                )
                assert connection.getresponse().read()
            connection.close()

        workers = [threading.Thread(target=hammer) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert len(emu.requests) == 100


def raw(
    emu: Emulator, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, Any, dict[str, str]]:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    status, payload = response.status, response.read()
    headers_out = {k.lower(): v for k, v in response.getheaders()}
    connection.close()
    assert headers_out["content-type"] == "application/json"
    return status, json.loads(payload), headers_out


ANTHROPIC_HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
OPENAI_HEADERS = {"authorization": "Bearer k"}
GEMINI_HEADERS = {"x-goog-api-key": "k"}
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


def test_unparseable_bodies_and_other_methods_get_native_errors() -> None:
    """What the SDKs never send still gets the API's own error, and is recorded."""
    nested = b"[" * 100_000  # deeper than the JSON parser goes
    with Emulator() as emu:
        status, body, _ = raw(emu, "POST", "/v1/messages", nested, ANTHROPIC_HEADERS)
        assert status == 400
        assert body["error"] == {
            "type": "invalid_request_error",
            "message": "The request body is not valid JSON.",
        }
        status, body, _ = raw(emu, "POST", "/v1/chat/completions", nested, OPENAI_HEADERS)
        assert status == 400
        assert body["error"]["type"] == "invalid_request_error"
        status, body, _ = raw(emu, "POST", GEMINI_PATH, nested, GEMINI_HEADERS)
        assert status == 400
        assert body["error"]["status"] == "INVALID_ARGUMENT"

        status, body, headers = raw(emu, "GET", "/v1/messages", None, ANTHROPIC_HEADERS)
        assert status == 405
        assert body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error"
        assert headers["allow"] == "POST"
        status, body, _ = raw(emu, "GET", "/v1/chat/completions", None, OPENAI_HEADERS)
        assert status == 405
        assert body["error"]["message"] == "Invalid method for URL (GET /v1/chat/completions)"
        status, body, _ = raw(emu, "GET", GEMINI_PATH, None, GEMINI_HEADERS)
        assert status == 404
        assert body == {
            "error": {"code": 404, "message": "Method not found.", "status": "NOT_FOUND"}
        }
        recorded = emu.requests
        assert [(r.api, r.method) for r in recorded] == [
            ("anthropic", "POST"),
            ("openai", "POST"),
            ("gemini", "POST"),
            ("anthropic", "GET"),
            ("openai", "GET"),
            ("gemini", "GET"),
        ]
        assert all(r.body is None for r in recorded)


def test_the_recording_is_bounded() -> None:
    assert MAX_RECORDED == 10_000
    with Emulator(max_recorded=3) as emu:
        for index in range(5):
            connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
            connection.request("GET", f"/nowhere/{index}")
            connection.getresponse().read()
            connection.close()
        assert [r.path for r in emu.requests] == ["/nowhere/2", "/nowhere/3", "/nowhere/4"]


def test_closing_during_a_slowed_stream_is_prompt_and_quiet(
    caplog: pytest.LogCaptureFixture,
) -> None:
    emu = Emulator().start()
    emu.inject(Fault.slow(0.5))
    outcome: list[str] = []

    def slow_client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
        body = {**HELLO, "stream": True}
        connection.request("POST", "/v1/messages", json.dumps(body), ANTHROPIC_HEADERS)
        response = connection.getresponse()
        try:
            response.read()
            outcome.append("complete")
        except http.client.IncompleteRead:
            outcome.append("cut")
        connection.close()

    worker = threading.Thread(target=slow_client)
    worker.start()
    deadline = time.monotonic() + 5
    while not emu.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # the response has started and waits on its first delay
    with caplog.at_level(logging.WARNING):
        started = time.monotonic()
        emu.close()
        elapsed = time.monotonic() - started
    worker.join(5)
    assert elapsed < 0.5
    assert outcome == ["cut"]
    assert [r.getMessage() for r in caplog.records] == []


def test_the_log_filter_applies_to_the_emulator_threads_only() -> None:
    logger = logging.getLogger("uvicorn.error")

    def record(thread: str) -> logging.LogRecord:
        made = logger.makeRecord(
            "uvicorn.error",
            logging.ERROR,
            __file__,
            0,
            "ASGI callable returned without completing response.",
            (),
            None,
        )
        made.threadName = thread
        return made

    assert logger.filter(record("thinkagent-emulator-1"))  # not installed: no emulator runs
    with Emulator():
        assert not logger.filter(record("thinkagent-emulator-1"))
        assert logger.filter(record("MainThread"))  # another uvicorn server's record
        with Emulator():
            pass
        assert not logger.filter(record("thinkagent-emulator-1"))
    assert logger.filter(record("thinkagent-emulator-1"))
    assert not [f for f in logger.filters if type(f).__name__ == "_DropIntentionalCuts"]


def test_command_line_serves_and_stops_on_sigint() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "thinkagent.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        banner = [process.stdout.readline() for _ in range(8)]
        urls = dict(re.findall(r"^\s+(\w+)\s+(http://\S+)$", "".join(banner), re.M))
        assert set(urls) == {"Anthropic", "Bedrock", "Gemini", "Vertex", "OpenAI", "Azure"}
        assert urls["OpenAI"] == urls["Anthropic"] + "/v1"
        port = int(urls["Anthropic"].rsplit(":", 1)[1])

        client = anthropic.Anthropic(api_key="k", base_url=urls["Anthropic"], max_retries=0)
        assert client.messages.create(**HELLO).stop_reason == "end_turn"
        client.close()
        bedrock = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=urls["Bedrock"],
            aws_access_key_id="AKIAEXAMPLE",
            aws_secret_access_key="secret",
        )
        reply = bedrock.converse(
            modelId="anthropic.claude-sonnet-4-5-20250929-v1:0",
            messages=[{"role": "user", "content": [{"text": "Hello"}]}],
        )
        assert reply["stopReason"] == "end_turn"
        with openai.OpenAI(api_key="k", base_url=urls["OpenAI"], max_retries=0) as oai:
            chat = oai.chat.completions.create(
                model="deepseek-reasoner", messages=[{"role": "user", "content": "Hello"}]
            )
            assert chat.choices[0].finish_reason == "stop"
            assert oai.responses.create(model="gpt-5", input="Hello").status == "completed"
        with openai.AzureOpenAI(
            api_key="k", api_version="2025-04-01-preview", azure_endpoint=urls["Azure"]
        ) as azure:
            reply = azure.chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "Hello"}]
            )
            assert reply.choices[0].finish_reason == "stop"
        if HAS_GENAI:
            gemini = genai.Client(
                api_key="k",
                http_options=genai.types.HttpOptions(
                    base_url=urls["Gemini"].removesuffix("/v1beta"), api_version="v1beta"
                ),
            )
            assert gemini.models.generate_content(
                model="gemini-3-pro-preview", contents="Hello"
            ).text

        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
        assert process.returncode == 0, err
        assert "stopped" in out
        with pytest.raises(ConnectionRefusedError):
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_command_line_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "thinkagent.emulator"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert "listening on http://127.0.0.1:" in process.stdout.readline()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
