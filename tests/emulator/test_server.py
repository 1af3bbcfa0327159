"""The Emulator's lifecycle, its client factories, request recording, and the command line."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
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


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _drop_nothing(record: logging.LogRecord) -> bool:
    return True


def test_an_emulator_leaves_its_hosts_logging_as_it_was() -> None:
    """An application that embeds the emulator keeps its uvicorn loggers' levels, handlers and
    filters, during and after; the emulator's reports go to its own logger (and the cuts it
    makes on purpose are not reported at all)."""
    names = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
    loggers = [logging.getLogger(name) for name in names]
    saved = [(lg.level, lg.handlers[:], lg.filters[:], lg.propagate) for lg in loggers]
    hosts = _Collect()
    ours = _Collect()
    emulator_log = logging.getLogger("thinkagent.emulator.server")
    try:
        for lg in loggers:  # the host's own setup: INFO with a handler and a filter
            lg.setLevel(logging.INFO)
            lg.addHandler(hosts)
            lg.addFilter(_drop_nothing)
            lg.propagate = False
        emulator_log.addHandler(ours)

        def snapshot() -> list[tuple[int, list[Any], list[Any], bool]]:
            return [(lg.level, lg.handlers[:], lg.filters[:], lg.propagate) for lg in loggers]

        before = snapshot()
        with Emulator() as emu:
            assert snapshot() == before
            emu.inject(Fault.cut())
            connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
            connection.request("POST", "/v1/messages", json.dumps(HELLO), ANTHROPIC_HEADERS)
            with pytest.raises(http.client.IncompleteRead):
                connection.getresponse().read()
            connection.close()
            with socket.create_connection(("127.0.0.1", emu.port), timeout=5) as sock:
                sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                assert sock.recv(1024).startswith(b"HTTP/1.1 400")
            assert snapshot() == before
        assert snapshot() == before
        assert hosts.records == []
        assert [r.getMessage() for r in ours.records] == ["Invalid HTTP request received."]
    finally:
        emulator_log.removeHandler(ours)
        for lg, (level, handlers, filters, propagate) in zip(loggers, saved, strict=True):
            lg.setLevel(level)
            lg.handlers[:] = handlers
            lg.filters[:] = filters
            lg.propagate = propagate


# --- limits -----------------------------------------------------------------------------------

BEDROCK_PATH = "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse"
VERTEX_PATH = (
    "/v1beta1/projects/p/locations/us-central1/publishers/google/models/"
    "gemini-2.5-flash:generateContent"
)
BEARER = {"authorization": "Bearer k"}
OPENAI_TOO_LARGE = {
    "message": "The request body exceeds the maximum size of 52428800 bytes.",
    "type": "invalid_request_error",
    "param": None,
    "code": None,
}
GOOGLE_TOO_LARGE = {
    "code": 400,
    "message": "Request payload size exceeds the limit: 104857600 bytes.",
    "status": "INVALID_ARGUMENT",
}


def declare(
    emu: Emulator, path: str, headers: dict[str, str], length: int
) -> tuple[int, dict[str, str], Any]:
    """Send a request's headers declaring a `length`-byte body, and read the answer without
    sending the body."""
    lines = [f"POST {path} HTTP/1.1", "Host: emulator", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in {**headers, "content-length": str(length)}.items()]
    with socket.create_connection(("127.0.0.1", emu.port), timeout=5) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n{").encode())
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = json.loads(response.read())
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body


@pytest.mark.parametrize(
    ("api", "path", "headers", "status", "error"),
    [
        (
            "anthropic",
            "/v1/messages",
            ANTHROPIC_HEADERS,
            413,
            {
                "type": "request_too_large",
                "message": "Request exceeds the maximum allowed number of bytes.",
            },
        ),
        (
            "bedrock",
            BEDROCK_PATH,
            {"authorization": "AWS4-HMAC-SHA256 Credential=k"},
            400,
            "1 validation error detected: Value at 'body' failed to satisfy constraint: "
            "Member must have length less than or equal to 25000000",
        ),
        (
            "gemini",
            GEMINI_PATH,
            GEMINI_HEADERS,
            400,
            GOOGLE_TOO_LARGE,
        ),
        (
            "vertex",
            VERTEX_PATH,
            BEARER,
            400,
            GOOGLE_TOO_LARGE,
        ),
        (
            "openai",
            "/v1/chat/completions",
            BEARER,
            413,
            OPENAI_TOO_LARGE,
        ),
        (
            "openai-responses",
            "/v1/responses",
            BEARER,
            413,
            OPENAI_TOO_LARGE,
        ),
    ],
)
def test_a_500_mb_body_is_refused_at_once_unread_with_the_services_error(
    api: str, path: str, headers: dict[str, str], status: int, error: Any
) -> None:
    """The documented size limit of each service, refused the way it refuses it, before the
    credentials, the faults or the body are looked at: nothing of the body is read or kept."""
    with Emulator() as emu:
        emu.inject(Fault.http(500))
        started = time.monotonic()
        got, response_headers, body = declare(emu, path, headers, 500_000_000)
        assert time.monotonic() - started < 2
        assert got == status
        if api == "bedrock":
            assert body == {"message": error}
            assert response_headers["x-amzn-errortype"].startswith("ValidationException")
        elif api == "anthropic":
            assert body["error"] == error
        else:
            assert body == {"error": error}
        (recorded,) = emu.requests
        assert (recorded.api, recorded.path, recorded.body) == (api, path, None)
        assert len(emu.pending_faults) == 1  # no fault is spent on it
        # the server is free at once for the next request
        status_ok, answer, _ = raw(
            emu,
            "POST",
            "/v1/messages",
            json.dumps(HELLO).encode(),
            {**ANTHROPIC_HEADERS, "content-type": "application/json"},
        )
        assert (status_ok, answer["type"]) == (500, "error")  # the fault, now spent


async def test_the_sdk_reads_the_413_of_a_body_over_32_mb() -> None:
    """A body that is sent whole (chunk by chunk, no length declared up front) is read up to
    the limit; the rest is read and dropped after the answer, which the client gets."""
    async with Emulator() as emu:
        client = emu.anthropic_client(max_retries=0)
        huge = {**HELLO, "messages": [{"role": "user", "content": "x" * (33 * 2**20)}]}
        with pytest.raises(anthropic.APIStatusError) as info:
            await client.messages.create(**huge)
        assert info.value.status_code == 413
        assert info.value.body["error"] == {  # type: ignore[index]
            "type": "request_too_large",
            "message": "Request exceeds the maximum allowed number of bytes.",
        }
        assert (await client.messages.create(**HELLO)).stop_reason == "end_turn"
        assert [r.body is None for r in emu.requests] == [True, False]
        await client.close()


def chunked(emu: Emulator, path: str, headers: dict[str, str], size: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    piece = b"x" * 2**20

    def body() -> Iterator[bytes]:
        for _ in range(size // len(piece)):
            yield piece

    connection.request("POST", path, body=body(), headers=headers, encode_chunked=True)
    status = connection.getresponse().status
    connection.close()
    return status


def test_a_chunked_body_is_cut_off_at_the_limit() -> None:
    with Emulator() as emu:
        assert chunked(emu, "/v1/messages", ANTHROPIC_HEADERS, 33 * 2**20) == 413
        assert chunked(emu, "/v1/messages", ANTHROPIC_HEADERS, 2**20) == 400  # not JSON
        assert [r.body for r in emu.requests] == [None, None]


def test_a_connection_whose_headers_do_not_come_is_closed() -> None:
    with Emulator(header_timeout=0.2) as emu:
        for sent in (b"", b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"):
            with socket.create_connection(("127.0.0.1", emu.port), timeout=5) as sock:
                sock.sendall(sent)
                started = time.monotonic()
                assert sock.recv(1024) == b""  # closed, without an answer
                assert 0.1 < time.monotonic() - started < 2
        # a kept-alive connection: each request gets its own time for its headers
        connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
        for _ in range(2):
            connection.request("POST", "/v1/messages", json.dumps(HELLO), ANTHROPIC_HEADERS)
            assert connection.getresponse().read()
            time.sleep(0.3)
        connection.close()
        assert len(emu.requests) == 2  # the silent connections reached nothing


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
