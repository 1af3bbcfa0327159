"""The reliability defects found in the adapters and the emulator, each pinned by a test named
after it (the core's are in `test_core_defects.py`)."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.config import Config

from thinkagent import Agent, Message, ModelRequest, ProviderError, validate_history
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.bedrock import BedrockModel

from .wires import QUESTION, WIRES, Wire, get_weather, outcome, wire_model

BEDROCK_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"
WIRES_BY_PATH = ["anthropic", "bedrock", "gemini", "openai-chat", "responses"]

# 2. A malformed 200 body is a ProviderError carrying a history that resumes, on every wire


@pytest.mark.parametrize("wire", WIRES)
async def test_defect_2_a_malformed_200_body_is_a_provider_error_whose_history_resumes(
    emu: Emulator, wire: Wire
) -> None:
    async with wire_model(emu, wire, retries=False) as model:
        agent = Agent(model, tools=[get_weather])
        emu.inject(Fault.malformed())
        error = await outcome(agent, QUESTION, streamed=False)
        assert isinstance(error, ProviderError)
        assert (error.error_type, error.retryable) == ("malformed_response", True)
        validate_history(error.messages)
        assert error.messages == [Message.user(QUESTION)]
        resumed = await outcome(agent, None, history=error.messages, streamed=False)
        assert not isinstance(resumed, BaseException)
        assert "sunny in Paris" in resumed.output


# 4. Cancelled blocking Bedrock calls: no starving of another client, no retries, slots back


class HungEndpoint(socketserver.ThreadingTCPServer):
    """Reads each request and never answers; counts the requests."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Hang)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.requests = 0
        self.lock = threading.Lock()
        self.release = threading.Event()

    async def wait_for(self, requests: int, within: float = 10) -> float:
        """Seconds until `requests` requests have arrived."""
        started = time.monotonic()
        while self.requests < requests:
            assert time.monotonic() - started < within, f"{self.requests} requests, not {requests}"
            await asyncio.sleep(0.005)
        return time.monotonic() - started


class _Hang(socketserver.BaseRequestHandler):
    server: HungEndpoint

    def handle(self) -> None:
        if self.request.recv(65536):
            with self.server.lock:
                self.server.requests += 1
        self.server.release.wait()


@contextmanager
def hung_endpoint() -> Iterator[HungEndpoint]:
    server = HungEndpoint()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


READ_TIMEOUT = 1.0


def hung_client(server: HungEndpoint) -> Any:
    """A client with botocore's standard retries (3 attempts) and a short read timeout."""
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(read_timeout=READ_TIMEOUT, connect_timeout=1, retries={"mode": "standard"}),
    )


async def test_defect_4_cancelled_bedrock_calls_neither_starve_another_client_nor_retry(
    bedrock_client: Any,
) -> None:
    """Ten cancelled calls against a hung endpoint (as many as the client has connections):
    a run on another client is not held up by them, no retry of them is ever sent, and their
    threads are free again within the read timeout."""
    request = ModelRequest([Message.user("Hello")])
    with hung_endpoint() as server:
        client = hung_client(server)
        hung = BedrockModel(BEDROCK_ID, client=client)
        calls = [asyncio.ensure_future(hung.request(request)) for _ in range(10)]
        await server.wait_for(10)
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

        started = time.monotonic()
        result = await Agent(BedrockModel(BEDROCK_ID, client=bedrock_client)).run("Hello")
        assert result.output
        assert time.monotonic() - started < READ_TIMEOUT  # not behind the hung calls

        later = asyncio.ensure_future(hung.request(request))  # needs a thread of its own
        assert await server.wait_for(11) < READ_TIMEOUT + 0.5
        later.cancel()
        await asyncio.sleep(2 * READ_TIMEOUT + 0.5)  # past every attempt's read timeout
        assert server.requests == 11  # no retry of a cancelled call was sent
        client.close()


async def test_defect_4_a_bedrock_stream_cancelled_before_its_headers_is_not_retried() -> None:
    with hung_endpoint() as server:
        client = hung_client(server)
        stream = BedrockModel(BEDROCK_ID, client=client).stream(ModelRequest([Message.user("Hi")]))
        first = asyncio.ensure_future(stream.__anext__())
        await server.wait_for(1)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        await stream.aclose()  # type: ignore[attr-defined]
        readers = [t for t in threading.enumerate() if t.name == "thinkagent-bedrock-stream"]
        for reader in readers:  # the reader ends with the attempt under way
            await asyncio.to_thread(reader.join, READ_TIMEOUT + 1)
            assert not reader.is_alive()
        assert server.requests == 1
        client.close()


# 6. A lone surrogate that reaches the emulator is invalid JSON (a 400), not a crash (a 500)


@pytest.mark.parametrize(
    ("path", "headers", "body"),
    [
        (
            "/v1/messages",
            {"x-api-key": "k", "anthropic-version": "2023-06-01"},
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 64,
                "messages": [{"role": "user", "content": "x\ud800"}],
            },
        ),
        (
            f"/model/{BEDROCK_ID}/converse",
            {"authorization": "AWS4-HMAC-SHA256 Credential=k"},
            {"messages": [{"role": "user", "content": [{"text": "x\ud800"}]}]},
        ),
        (
            "/v1beta/models/gemini-2.5-flash:generateContent",
            {"x-goog-api-key": "k"},
            {"contents": [{"role": "user", "parts": [{"text": "x\udfff"}]}]},
        ),
        (
            "/v1/chat/completions",
            {"authorization": "Bearer k"},
            {"model": "gpt-5", "messages": [{"role": "user", "content": "x\ud800"}]},
        ),
        ("/v1/responses", {"authorization": "Bearer k"}, {"model": "gpt-5", "input": "x\ud800"}),
    ],
    ids=WIRES_BY_PATH,
)
def test_defect_6_the_emulator_refuses_a_lone_surrogate_as_invalid_json(
    emu: Emulator, path: str, headers: dict[str, str], body: Any
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
    connection.request(
        "POST", path, json.dumps(body), {**headers, "content-type": "application/json"}
    )
    response = connection.getresponse()
    assert response.status == 400
    assert "The request body is not valid JSON." in response.read().decode()
    connection.close()
    # a surrogate pair (an emoji, escaped) is fine
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
    paired = (
        json.dumps(body).replace("\\ud800", "\\ud83d\\ude00").replace("\\udfff", "\\ud83d\\ude00")
    )
    connection.request("POST", path, paired, {**headers, "content-type": "application/json"})
    assert connection.getresponse().status == 200
    connection.close()


# 8. The emulator as a server: a size limit, a header timeout


def test_defect_8_a_500_mb_body_is_refused_at_once_and_never_kept() -> None:
    with Emulator() as emu, socket.create_connection(("127.0.0.1", emu.port), 5) as sock:
        started = time.monotonic()
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: emulator\r\nx-api-key: k\r\n"
            b"anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n"
            b"content-length: 500000000\r\n\r\n{"
        )
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert response.status == 413
        assert json.loads(response.read())["error"]["type"] == "request_too_large"
        assert time.monotonic() - started < 2
        assert [r.body for r in emu.requests] == [None]


def test_defect_8_a_connection_that_never_sends_its_headers_is_closed() -> None:
    with (
        Emulator(header_timeout=0.2) as emu,
        socket.create_connection(("127.0.0.1", emu.port), 5) as sock,
    ):
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: emulator\r\n")
        assert sock.recv(1024) == b""  # closed by the server, not by the 5 s socket timeout


# 9. Retry-after: botocore keeps its own schedule; the default client keeps the environment's


async def test_defect_9_boto3_retries_on_its_own_schedule_not_after_retry_after(
    emu: Emulator, retrying_bedrock_client: Any
) -> None:
    """Documented in docs/providers/bedrock.md: botocore reads `x-amz-retry-after`, never
    `retry-after`; a throttled request is retried after its own back-off (under 1 s for the
    first retry), whatever `retry-after` says."""
    emu.inject(Fault.rate_limited(retry_after=3.0, api="bedrock"))
    started = time.monotonic()
    result = await Agent(BedrockModel(BEDROCK_ID, client=retrying_bedrock_client)).run("Hello")
    assert result.output
    assert time.monotonic() - started < 2.0
    assert len(emu.requests) == 2


def test_defect_9_the_default_bedrock_client_keeps_the_environments_retry_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_RETRY_MODE", "adaptive")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")
    retries = BedrockModel(BEDROCK_ID, region_name="eu-west-1").client.meta.config.retries
    assert retries == {"mode": "adaptive", "total_max_attempts": 5}
    monkeypatch.delenv("AWS_RETRY_MODE")
    monkeypatch.delenv("AWS_MAX_ATTEMPTS")
    retries = BedrockModel(BEDROCK_ID, region_name="eu-west-1").client.meta.config.retries
    assert retries["mode"] == "standard"
