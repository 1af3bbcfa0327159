"""The emulator says no like the services (issue 21, defects 4 and 5): request bodies validated
as each service validates them, and hostile bodies and scripts answered with a 4xx or served,
never a 500."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from thinkagent.emulator import Emulator, Reply, ToolCallSpec

BEDROCK_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"
ANTHROPIC = (
    "/v1/messages",
    {"x-api-key": "k", "anthropic-version": "2023-06-01"},
    {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Hi"}],
    },
)
CHAT = (
    "/v1/chat/completions",
    {"authorization": "Bearer k"},
    {"model": "gpt-5", "messages": [{"role": "user", "content": "Hi"}]},
)
RESPONSES = ("/v1/responses", {"authorization": "Bearer k"}, {"model": "gpt-5", "input": "Hi"})
GEMINI = (
    "/v1beta/models/gemini-2.5-flash:generateContent",
    {"x-goog-api-key": "k"},
    {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
)
BEDROCK = (
    f"/model/{BEDROCK_ID}/converse",
    {"authorization": "AWS4-HMAC-SHA256 Credential=k"},
    {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]},
)
INTERACTIONS = (
    "/v1beta/interactions",
    {"x-goog-api-key": "k"},
    {"model": "gemini-3-pro-preview", "input": "Hi"},
)
Route = tuple[str, dict[str, str], dict[str, Any]]


def post(emu: Emulator, route: Route, body: Any, *, stream: str | None = None) -> tuple[int, bytes]:
    path, headers, _ = route
    if stream is not None:
        path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
        path = path.replace("/converse", "/converse-stream")
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=30)
    raw = body if isinstance(body, str) else json.dumps(body)
    connection.request("POST", path, raw, {**headers, "content-type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def error_message(data: bytes) -> str:
    body = json.loads(data)
    error = body.get("error", body)
    return error["message"] if isinstance(error, dict) else body["message"]


# 5. The invalid requests the services refuse, each with its status and message

REFUSED: list[tuple[str, Route, dict[str, Any], str]] = [
    (
        "anthropic-stream-yes",
        ANTHROPIC,
        {"stream": "yes"},
        "stream: Input should be a valid boolean",
    ),
    ("anthropic-stream-1", ANTHROPIC, {"stream": 1}, "stream: Input should be a valid boolean"),
    (
        "anthropic-max-tokens-1e30",
        ANTHROPIC,
        {"max_tokens": 1e30},
        "max_tokens: Input should be a valid integer",
    ),
    (
        "anthropic-max-tokens-10**30",
        ANTHROPIC,
        {"max_tokens": 10**30},
        f"max_tokens: {10**30} > 64000, which is the maximum allowed number of output tokens "
        "for claude-sonnet-4-5",
    ),
    (
        "anthropic-temperature-2",
        ANTHROPIC,
        {"temperature": 2},
        "temperature: Input should be less than or equal to 1",
    ),
    (
        "chat-max-completion-tokens-0",
        CHAT,
        {"max_completion_tokens": 0},
        "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 1, "
        "but got 0 instead.",
    ),
    (
        "responses-stream-yes",
        RESPONSES,
        {"stream": "yes"},
        "Invalid type for 'stream': expected a boolean, but got a string instead.",
    ),
    (
        "responses-stream-1",
        RESPONSES,
        {"stream": 1},
        "Invalid type for 'stream': expected a boolean, but got an integer instead.",
    ),
    (
        "responses-max-output-tokens-lots",
        RESPONSES,
        {"max_output_tokens": "lots"},
        "Invalid type for 'max_output_tokens': expected an integer, but got a string instead.",
    ),
    (
        "responses-max-output-tokens--5",
        RESPONSES,
        {"max_output_tokens": -5},
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but "
        "got -5 instead.",
    ),
    (
        "responses-max-output-tokens-1e30",
        RESPONSES,
        {"max_output_tokens": 1e30},
        "Invalid type for 'max_output_tokens': expected an integer, but got a decimal instead.",
    ),
    (
        "responses-max-output-tokens-10**30",
        RESPONSES,
        {"max_output_tokens": 10**30},
        "Invalid 'max_output_tokens': integer above maximum value. Expected a value <= "
        f"2147483647, but got {10**30} instead.",
    ),
    (
        "responses-input-null",
        RESPONSES,
        {"input": None},
        "Invalid type for 'input': expected one of a string or an array, but got null instead.",
    ),
    (
        "responses-tools-string",
        RESPONSES,
        {"tools": "all of them"},
        "Invalid type for 'tools': expected an array, but got a string instead.",
    ),
    (
        "responses-reasoning-string",
        RESPONSES,
        {"reasoning": "x"},
        "Invalid type for 'reasoning': expected an object, but got a string instead.",
    ),
    (
        "gemini-unknown-field",
        GEMINI,
        {"foo": 1},
        'Invalid JSON payload received. Unknown name "foo": Cannot find field.',
    ),
    ("bedrock-unknown-field", BEDROCK, {"foo": 1}, "The request body has an unknown field: foo."),
]


@pytest.mark.parametrize(
    ("route", "change", "message"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_defect_5_the_emulator_refuses_what_the_services_refuse(
    emu: Emulator, route: Route, change: dict[str, Any], message: str
) -> None:
    status, data = post(emu, route, {**route[2], **change})
    assert status == 400, data
    assert error_message(data) == message


@pytest.mark.parametrize(
    "route", [ANTHROPIC, CHAT, RESPONSES], ids=["anthropic", "chat", "responses"]
)
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_defect_5_nan_and_infinity_are_not_json(emu: Emulator, route: Route, constant: str) -> None:
    raw = json.dumps({**route[2], "temperature": 0.5}).replace("0.5", constant)
    status, data = post(emu, route, raw)
    assert status == 400
    assert "not valid JSON" in error_message(data)


@pytest.mark.parametrize(
    ("route", "change"),
    [
        (ANTHROPIC, {"stream": False, "temperature": 1, "top_p": 0.5, "top_k": 0}),
        (ANTHROPIC, {"max_tokens": 64000}),
        (CHAT, {"stream": False, "temperature": 2, "max_completion_tokens": 1}),
        (RESPONSES, {"stream": False, "max_output_tokens": 16, "input": [], "tools": []}),
        (RESPONSES, {"reasoning": {"effort": "low"}, "temperature": None}),
        (GEMINI, {"generation_config": {"temperature": 1}, "systemInstruction": {"parts": []}}),
        (BEDROCK, {"inferenceConfig": {"maxTokens": 64}, "additionalModelRequestFields": {}}),
    ],
    ids=[
        "anthropic",
        "anthropic-limit",
        "chat",
        "responses",
        "responses-null",
        "gemini",
        "bedrock",
    ],
)
def test_what_the_services_take_the_emulator_takes(
    emu: Emulator, route: Route, change: dict[str, Any]
) -> None:
    status, data = post(emu, route, {**route[2], **change})
    assert status == 200, data


# 4. No 500: a scripted lone surrogate is served escaped, deep argument text is a 400

SCRIPTED: list[tuple[str, Route]] = [
    ("anthropic", ANTHROPIC),
    ("bedrock", BEDROCK),
    ("gemini", GEMINI),
    ("openai", CHAT),
    ("openai-responses", RESPONSES),
    ("gemini-interactions", INTERACTIONS),
]


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(
    ("api", "route"),
    SCRIPTED,
    ids=[api for api, _ in SCRIPTED],
)
def test_defect_4_a_scripted_lone_surrogate_is_served_as_its_escape_never_a_500(
    emu: Emulator, api: str, route: Route, streamed: bool
) -> None:
    emu.script(
        api,
        [
            Reply(
                thinking="we\udfffigh",
                text="hi \ud800 there",
                tool_calls=[ToolCallSpec("get_weather", {"city": "\ud800"})],
            )
        ],
    )
    body = {**route[2]}
    if streamed and api in ("anthropic", "openai", "openai-responses", "gemini-interactions"):
        body["stream"] = True
    status, data = post(emu, route, body, stream="yes" if streamed else None)
    assert status == 200, data  # before: a 500 (UnicodeEncodeError) on every route
    if not streamed:  # one JSON body: the escapes, as a server that sent one would write them
        reply = json.loads(data)
        assert "\\ud800" in json.dumps(reply)  # a lone surrogate, or the escape in arguments


@pytest.mark.parametrize(
    ("route", "where"),
    [
        (CHAT, "messages[1].tool_calls[0].function.arguments"),
        (RESPONSES, "input[1].arguments"),
    ],
    ids=["chat", "responses"],
)
@pytest.mark.parametrize("stream", [False, True])
def test_defect_4_argument_text_nested_too_deeply_is_a_400_not_a_500(
    emu: Emulator, route: Route, where: str, stream: bool
) -> None:
    deep = '{"city":' + "[" * 100_000 + "]" * 100_000 + "}"
    if route is CHAT:
        history: dict[str, Any] = {
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": deep},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            ]
        }
    else:
        history = {
            "input": [
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "get_weather",
                    "arguments": deep,
                },
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            ]
        }
    status, data = post(emu, route, {**route[2], **history, "stream": stream})
    assert status == 400, data
    assert error_message(data) == f"Invalid '{where}': the JSON is nested too deeply to be parsed."
    # argument text that is merely not JSON is kept, as the services keep it
    plain = json.dumps(history).replace(json.dumps(deep)[1:-1], '{\\"city\\": \\"Par')
    status, data = post(emu, route, {**route[2], **json.loads(plain), "stream": stream})
    assert status == 200, data
