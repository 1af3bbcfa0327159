"""The emulator's OpenAI-compatible hosts, through the unmodified `openai` SDK: each dialect's
reasoning shape, its switches and its refusals (status and body), the dialect knob, and the
request checks the real Chat Completions service makes (stream type, content part types,
images, response formats)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator

from .test_openai_chat import USER, ask, bad_request, results, three_turns
from .tools import CHAT_TOOLS, QUESTION, RESPONSES_TOOLS

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def strip(message: dict[str, Any]) -> dict[str, Any]:
    bare = {k: v for k, v in message.items() if k not in ("reasoning_content", "reasoning")}
    bare.pop("reasoning_details", None)
    return bare


# --- Kimi ------------------------------------------------------------------------------------


async def test_kimi_refuses_a_tool_call_message_without_its_reasoning(
    openai_client: openai.AsyncOpenAI,
) -> None:
    first = await ask(openai_client, "kimi-k2-thinking", [USER], stream=False, tools=CHAT_TOOLS)
    assert QUESTION in first["message"]["reasoning_content"]
    kept = [USER, first["message"], *results(first["message"])]
    second = await ask(openai_client, "kimi-k2-thinking", kept, stream=False, tools=CHAT_TOOLS)
    assert second["finish_reason"] == "tool_calls"
    placeholder = copy.deepcopy(kept)
    placeholder[1]["reasoning_content"] = ""  # accepted: the field is there
    await ask(openai_client, "kimi-k2-thinking", placeholder, stream=False, tools=CHAT_TOOLS)
    bare = [USER, strip(first["message"]), *results(first["message"])]
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, "kimi-k2-thinking", bare, stream=False, tools=CHAT_TOOLS)
    assert bad_request(exc) == {  # the SDK's body is the `error` object
        "message": "thinking is enabled but reasoning_content is missing in assistant tool "
        "call message at index 1",
        "type": "invalid_request_error",
    }
    # with thinking off (K2.5 can turn it off) nothing is required
    off = {"thinking": {"type": "disabled"}}
    await ask(openai_client, "kimi-k2.5", bare, stream=False, tools=CHAT_TOOLS, extra_body=off)


async def test_kimi_thinking_switch_is_an_object_never_with_an_effort(
    openai_client: openai.AsyncOpenAI,
) -> None:
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, "kimi-k2.5", [USER], stream=False, extra_body={"thinking": True})
    assert "bool is not acceptable" in bad_request(exc)["message"]
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(
            openai_client,
            "kimi-k2.5",
            [USER],
            stream=False,
            reasoning_effort="high",
            extra_body={"thinking": {"type": "enabled"}},
        )
    assert bad_request(exc)["message"] == ("cannot specify both 'thinking' and 'reasoning_effort'")


# --- OpenRouter ------------------------------------------------------------------------------


async def test_openrouter_relays_each_vendors_reasoning_details(
    openai_client: openai.AsyncOpenAI,
) -> None:
    on = {"reasoning": {"enabled": True}}
    claude = await ask(
        openai_client,
        "anthropic/claude-sonnet-4.5",
        [USER],
        stream=False,
        tools=CHAT_TOOLS,
        extra_body=on,
    )
    (item,) = claude["message"]["reasoning_details"]
    assert item["type"] == "reasoning.text" and item["format"] == "anthropic-claude-v1"
    assert item["text"] == claude["message"]["reasoning"] and len(item["signature"]) > 100
    gemini = await ask(
        openai_client, "google/gemini-3-pro-preview", [USER], stream=False, tools=CHAT_TOOLS
    )
    text, encrypted = gemini["message"]["reasoning_details"]
    assert text["type"] == "reasoning.text" and encrypted["type"] == "reasoning.encrypted"
    assert encrypted["id"] == gemini["message"]["tool_calls"][0]["id"]
    gpt = await ask(openai_client, "openai/gpt-5", [USER], stream=False, tools=CHAT_TOOLS)
    assert [d["type"] for d in gpt["message"]["reasoning_details"]] == [
        "reasoning.summary",
        "reasoning.encrypted",
    ]
    # Claude thinks on OpenRouter only when asked
    quiet = await ask(
        openai_client, "anthropic/claude-sonnet-4.5", [USER], stream=False, tools=CHAT_TOOLS
    )
    assert "reasoning_details" not in quiet["message"] and "reasoning" not in quiet["message"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_openrouter_streams_details_that_assemble_to_the_same_items(
    openai_client: openai.AsyncOpenAI, stream: bool
) -> None:
    on = {"reasoning": {"enabled": True}}
    turn = await ask(
        openai_client,
        "anthropic/claude-sonnet-4.5",
        [USER],
        stream=stream,
        tools=CHAT_TOOLS,
        extra_body=on,
    )
    if stream:  # the raw deltas: text fragments, then the signature on its own
        frames = [
            d.model_extra["reasoning_details"]
            for d in turn["deltas"]
            if (d.model_extra or {}).get("reasoning_details")
        ]
        text = "".join(f[0].get("text", "") for f in frames)
        signatures = [f[0]["signature"] for f in frames if "signature" in f[0]]
        assert text == turn["message"]["reasoning"] and len(signatures) == 1
    else:
        assert turn["message"]["reasoning_details"][0]["signature"]


async def test_openrouter_wraps_the_upstreams_refusal(openai_client: openai.AsyncOpenAI) -> None:
    first = await ask(
        openai_client, "google/gemini-3-pro-preview", [USER], stream=False, tools=CHAT_TOOLS
    )
    kept = [USER, first["message"], *results(first["message"])]
    await ask(openai_client, "google/gemini-3-pro-preview", kept, stream=False, tools=CHAT_TOOLS)
    bare = [USER, strip(first["message"]), *results(first["message"])]
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(
            openai_client, "google/gemini-3-pro-preview", bare, stream=False, tools=CHAT_TOOLS
        )
    body = bad_request(exc)
    assert body["message"] == "Provider returned error" and body["code"] == 400
    assert body["metadata"]["provider_name"] == "Google"
    raw = json.loads(body["metadata"]["raw"])
    assert raw["error"]["status"] == "INVALID_ARGUMENT"
    assert raw["error"]["message"].startswith(
        "Function call is missing a thought_signature in functionCall parts."
    )
    tampered = copy.deepcopy(kept)
    tampered[1]["reasoning_details"][1]["data"] = (
        "AAAA" + tampered[1]["reasoning_details"][1]["data"][4:]
    )
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(
            openai_client, "google/gemini-3-pro-preview", tampered, stream=False, tools=CHAT_TOOLS
        )
    raw = json.loads(bad_request(exc)["metadata"]["raw"])
    assert raw["error"]["message"] == "Corrupted thought signature."


async def test_openrouter_claude_wants_its_signed_thinking_back(
    openai_client: openai.AsyncOpenAI,
) -> None:
    on = {"reasoning": {"enabled": True}}
    name = "anthropic/claude-sonnet-4.5"
    first = await ask(openai_client, name, [USER], stream=False, tools=CHAT_TOOLS, extra_body=on)
    kept = [USER, first["message"], *results(first["message"])]
    await ask(openai_client, name, kept, stream=False, tools=CHAT_TOOLS, extra_body=on)
    bare = [USER, strip(first["message"]), *results(first["message"])]
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, name, bare, stream=False, tools=CHAT_TOOLS, extra_body=on)
    raw = json.loads(bad_request(exc)["metadata"]["raw"])
    assert raw["error"]["message"].startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        "`tool_use`."
    )
    tampered = copy.deepcopy(kept)
    tampered[1]["reasoning_details"][0]["text"] += " (edited)"
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, name, tampered, stream=False, tools=CHAT_TOOLS, extra_body=on)
    raw = json.loads(bad_request(exc)["metadata"]["raw"])
    assert (
        raw["error"]["message"] == "messages.1.content.0: Invalid `signature` in `thinking` block"
    )
    # without thinking the upstream has no such rule
    await ask(openai_client, name, bare, stream=False, tools=CHAT_TOOLS)


# --- hosts with no documented refusal ---------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "model", "field"),
    [
        (None, "glm-4.6", "reasoning_content"),
        ("zai", "glm-5", "reasoning_content"),
        ("vllm", "Qwen/Qwen3-8B", "reasoning"),
        ("groq", "openai/gpt-oss-120b", "reasoning"),
        ("together", "deepseek-ai/DeepSeek-R1", "reasoning"),
    ],
)
async def test_hosts_that_read_reasoning_back_without_requiring_it(
    emu: Emulator, route: str | None, model: str, field: str
) -> None:
    """Z.AI, vLLM (0.16+ names the field `reasoning`), Groq, Together: the reasoning field is
    returned and read back; none of them documents a refusal when it is left out."""
    client = emu.openai_client(max_retries=0, base_url=f"{emu.url}/{route}/v1" if route else None)
    if route is None:
        client = emu.openai_client(max_retries=0)
    turns = await three_turns(client, model, stream=True)
    assert [t["finish_reason"] for t in turns] == ["tool_calls", "tool_calls", "stop"]
    assert all(QUESTION in t["message"][field] for t in turns)
    assert "sunny, 21 C" in turns[1]["message"][field]  # it read the replayed results
    first = turns[0]["message"]
    await ask(client, model, [USER, strip(first), *results(first)], stream=False, tools=CHAT_TOOLS)
    await client.close()


async def test_the_vllm_switch_goes_through_the_chat_template(emu: Emulator) -> None:
    client = emu.openai_client(max_retries=0, base_url=f"{emu.url}/vllm/v1")
    off = {"chat_template_kwargs": {"enable_thinking": False}}
    turn = await ask(client, "Qwen/Qwen3-8B", [USER], stream=False, extra_body=off)
    assert "reasoning" not in turn["message"]
    await client.close()


async def test_an_unknown_dialect_knob_is_not_found(emu: Emulator) -> None:
    client = emu.openai_client(max_retries=0, base_url=f"{emu.url}/nowhere/v1")
    with pytest.raises(openai.NotFoundError) as exc:
        await ask(client, "Qwen/Qwen3-8B", [USER], stream=False)
    assert "no dialect 'nowhere'" in str(exc.value)
    await client.close()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_magistral_thinks_in_content_chunks(
    openai_client: openai.AsyncOpenAI, stream: bool
) -> None:
    if stream:
        chunks = await openai_client.chat.completions.create(
            model="magistral-medium-latest", messages=[USER], tools=CHAT_TOOLS, stream=True
        )
        contents = [c.choices[0].delta.content async for c in chunks if c.choices]
        thinking = [c for c in contents if isinstance(c, list)]
        assert thinking and all(c[0]["type"] == "thinking" for c in thinking)
        text = "".join(c[0]["thinking"][0]["text"] for c in thinking)
        assert QUESTION in text
        return
    reply = await openai_client.chat.completions.create(
        model="magistral-medium-latest", messages=[USER], tools=CHAT_TOOLS
    )
    # the SDK types `content` as a string: the list comes through as it is
    message = reply.choices[0].message.model_dump(exclude_none=True, warnings=False)
    thought, said = message["content"]
    assert thought["type"] == "thinking" and QUESTION in thought["thinking"][0]["text"]
    assert said == {"type": "text", "text": "I'll use get_weather to look that up."}
    call_id = message["tool_calls"][0]["id"]
    assert len(call_id) == 9 and call_id.isalnum()  # Mistral's own call ids
    # the chunks go back in the assistant message as they came
    second = await openai_client.chat.completions.create(
        model="magistral-medium-latest",
        messages=[USER, message, *results(message)],  # type: ignore[list-item]
        tools=CHAT_TOOLS,  # type: ignore[arg-type]
    )
    assert second.choices[0].finish_reason == "tool_calls"
    # Mistral's strict schema has no reasoning field: the reasoning goes back as chunks only
    fielded = {**message, "reasoning_content": "x"}
    with pytest.raises(openai.UnprocessableEntityError) as refused:
        await openai_client.chat.completions.create(
            model="magistral-medium-latest",
            messages=[USER, fielded, *results(message)],  # type: ignore[list-item]
            tools=CHAT_TOOLS,  # type: ignore[arg-type]
        )
    assert refused.value.body == {
        "detail": [
            {
                "type": "extra_forbidden",
                "loc": ["body", "messages", 1, "assistant", "reasoning_content"],
                "msg": "Extra inputs are not permitted",
                "input": "x",
            }
        ]
    }


# --- DeepSeek and xAI on Responses ------------------------------------------------------------


async def responses(client: openai.AsyncOpenAI, model: str, items: list[Any], **kw: Any) -> Any:
    return await client.responses.create(
        model=model, input=items, tools=RESPONSES_TOOLS, store=False, **kw
    )


def replayable(output: Any) -> list[dict[str, Any]]:
    return [item.model_dump(exclude_none=False, exclude_unset=True) for item in output]


def call_outputs(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": item["call_id"], "output": "sunny, 21 C"}
        for item in output
        if item["type"] == "function_call"
    ]


async def test_deepseek_responses_items_are_unsigned_and_required(
    openai_client: openai.AsyncOpenAI,
) -> None:
    first = await responses(openai_client, "deepseek-v4-pro", [USER])
    reasoning, call = replayable(first.output)
    assert reasoning["content"] == [
        {"type": "reasoning_text", "text": reasoning["content"][0]["text"]}
    ]
    assert reasoning["encrypted_content"] is None and reasoning["id"].startswith("rs_")
    assert call["type"] == "function_call"
    kept = [USER, reasoning, call, *call_outputs([call])]
    second = await responses(openai_client, "deepseek-v4-pro", kept)
    assert [i.type for i in second.output] == ["reasoning", "function_call"]
    with pytest.raises(openai.BadRequestError) as exc:
        await responses(openai_client, "deepseek-v4-pro", [USER, call, *call_outputs([call])])
    assert bad_request(exc)["message"] == (
        "The `reasoning_text` in the thinking mode must be passed back to the API."
    )
    # with thinking off there is no such rule
    off = {"effort": "none"}
    await responses(
        openai_client, "deepseek-v4-pro", [USER, call, *call_outputs([call])], reasoning=off
    )


async def test_xai_responses_items_have_no_id_and_decrypt_only_there(
    openai_client: openai.AsyncOpenAI,
) -> None:
    first = await responses(
        openai_client, "grok-4", [USER], include=["reasoning.encrypted_content"]
    )
    reasoning, call = replayable(first.output)
    assert "id" not in reasoning and reasoning["encrypted_content"]
    kept = [USER, reasoning, call, *call_outputs([call])]
    await responses(openai_client, "grok-4", kept)
    await responses(openai_client, "grok-4", [USER, call, *call_outputs([call])])  # dropped: 200
    forged = copy.deepcopy(kept)
    forged[1]["encrypted_content"] = forged[1]["encrypted_content"][:-8] + "AAAAAAA="
    with pytest.raises(openai.BadRequestError) as exc:
        await responses(openai_client, "grok-4", forged)
    assert bad_request(exc)["message"] == "Could not decrypt the provided encrypted_content"


# --- the request checks of Chat Completions -----------------------------------------------------


async def test_stream_must_be_a_boolean(openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(
            model="gpt-5", messages=[USER], extra_body={"stream": "yes"}
        )
    assert bad_request(exc) == {
        "message": "Invalid type for 'stream': expected a boolean, but got a string instead.",
        "type": "invalid_request_error",
        "param": "stream",
        "code": "invalid_type",
    }


async def test_unknown_content_part_types_are_refused(openai_client: openai.AsyncOpenAI) -> None:
    odd = {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}, {"type": "video", "url": "x"}],
    }
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.chat.completions.create(model="gpt-5", messages=[odd])  # type: ignore[list-item]
    assert bad_request(exc) == {
        "message": "Invalid value: 'video'. Supported values are: 'text', 'image_url', "
        "'input_audio', and 'file'.",
        "type": "invalid_request_error",
        "param": "messages[0].content[1].type",
        "code": "invalid_value",
    }
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": []}]}
    with pytest.raises(openai.BadRequestError):  # a Mistral chunk means nothing to OpenAI
        await openai_client.chat.completions.create(model="gpt-5", messages=[USER, thinking])  # type: ignore[list-item]


async def test_images_and_files_are_seen_with_their_sizes(
    openai_client: openai.AsyncOpenAI,
) -> None:
    pdf = b"%PDF-1.4\n% a small document\n%%EOF\n"
    content = [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": data_url(PNG, "image/png")}},
        {
            "type": "file",
            "file": {"filename": "a.pdf", "file_data": data_url(pdf, "application/pdf")},
        },
    ]
    turn = await ask(openai_client, "gpt-5", [{"role": "user", "content": content}], stream=False)
    answer = turn["message"]["content"]
    assert f"image (image/png, {len(PNG)} bytes)" in answer
    assert f"document (application/pdf, {len(pdf)} bytes)" in answer


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (data_url(b"GIF89a-not-really", "image/bmp"), "has of one the following formats"),
        (data_url(b"\0" * (20 * 1024 * 1024 + 1), "image/png"), "is below 20 MB in size"),
        ("data:image/png;base64,***", "Expected a base64-encoded data URL"),
    ],
    ids=["format", "size", "not-base64"],
)
async def test_images_the_service_refuses(
    openai_client: openai.AsyncOpenAI, url: str, expected: str
) -> None:
    content = [{"type": "image_url", "image_url": {"url": url}}]
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, "gpt-5", [{"role": "user", "content": content}], stream=False)
    assert expected in bad_request(exc)["message"]


async def test_a_json_schema_response_format_shapes_the_answer(
    openai_client: openai.AsyncOpenAI,
) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"],
        "additionalProperties": False,
    }
    response_format = {"type": "json_schema", "json_schema": {"name": "w", "schema": schema}}
    turn = await ask(openai_client, "gpt-5", [USER], stream=False, response_format=response_format)
    assert set(json.loads(turn["message"]["content"])) == {"city", "celsius"}
    with pytest.raises(openai.BadRequestError) as exc:
        await ask(openai_client, "gpt-5", [USER], stream=False, response_format={"type": "yaml"})
    assert bad_request(exc)["param"] == "response_format.type"
    done = await openai_client.responses.create(
        model="gpt-5",
        input=QUESTION,
        text={"format": {"type": "json_schema", "name": "w", "schema": schema}},
    )
    assert set(json.loads(done.output_text)) == {"city", "celsius"}
