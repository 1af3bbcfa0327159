"""The Emulator's lifecycle, its client factories, request recording, and the command line."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
from typing import Any

import anthropic
import boto3
import openai
import pytest

from thinkagent.emulator import Emulator, RecordedRequest

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

        # Routes the other wire modules will serve: the requests already arrive here.
        for call in (
            o.with_options(max_retries=0).chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "hi"}]
            ),
            az.with_options(max_retries=0).chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "hi"}]
            ),
        ):
            with contextlib.suppress(openai.APIStatusError):
                await call
        for client in (emu.gemini_client(), emu.vertex_client()):
            with contextlib.suppress(genai.errors.APIError):
                await client.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
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
        for client_ in (emu.gemini_client(api_key=secrets[4]),):
            with contextlib.suppress(genai.errors.APIError):
                await client_.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
        az = emu.azure_client(api_key=secrets[5], max_retries=0)
        with contextlib.suppress(openai.APIStatusError):
            await az.chat.completions.create(
                model="gpt-5", messages=[{"role": "user", "content": "hi"}]
            )
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
