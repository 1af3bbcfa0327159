"""The emulator's rule for a system message after the first turn, through the unmodified
`openai` SDK: OpenAI reads a `system` or `developer` message wherever it stands (Chat
Completions and the Responses API alike); Mistral and the chat templates behind vLLM that want
it first refuse it, with their own texts. And DeepSeek's refusal of a content array, which is
why a note sent as text joins the prompt's string there."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator

from .test_openai_chat import USER, ask, bad_request

LATER = [
    USER,
    {"role": "assistant", "content": "It is sunny."},
    {"role": "system", "content": "From now on, answer in one sentence."},
    {"role": "user", "content": "And tomorrow?"},
]


@pytest.fixture
async def routes(emu: Emulator) -> AsyncIterator[Callable[[str], openai.AsyncOpenAI]]:
    """Clients for the emulator's dialect knobs (`/{knob}/v1`), closed after the test."""
    made: list[openai.AsyncOpenAI] = []

    def route(knob: str) -> openai.AsyncOpenAI:
        made.append(emu.openai_client(base_url=f"{emu.url}/{knob}/v1", max_retries=0))
        return made[-1]

    yield route
    for client in made:
        await client.close()


@pytest.mark.parametrize("role", ["system", "developer"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_openai_reads_a_system_message_wherever_it_stands(
    openai_client: openai.AsyncOpenAI, role: str, stream: bool
) -> None:
    note = {**LATER[2], "role": role}
    after_the_answer = [*LATER[:2], note, LATER[3]]
    after_the_prompt = [USER, note]
    for messages in (after_the_answer, after_the_prompt):
        turn = await ask(openai_client, "gpt-5", messages, stream=stream)
        assert turn["finish_reason"] == "stop" and turn["message"]["content"]


async def test_mistral_refuses_a_system_message_after_the_conversation_began(
    routes: Callable[[str], openai.AsyncOpenAI],
) -> None:
    client = routes("mistral")
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(client, "magistral-medium-latest", LATER, stream=False)
    body = bad_request(caught)
    assert body["message"] == "Unexpected role 'system' after role 'assistant'"
    assert body["type"] == "invalid_request_error"
    # first, it is the instructions (read raw: Magistral's content is a list of chunks, which
    # the SDK's typed message, whose content is a string, warns about when dumped)
    first = [{"role": "system", "content": "Be brief."}, USER]
    raw = await client.chat.completions.with_raw_response.create(
        model="magistral-medium-latest", messages=first
    )
    assert raw.status_code == 200
    assert json.loads(raw.content)["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    ("model", "refused"),
    [("Qwen/Qwen3-8B", True), ("meta-llama/Llama-4-Scout", True), ("openai/gpt-oss-20b", False)],
)
async def test_a_vllm_chat_template_that_wants_the_system_message_first_refuses_it_later(
    routes: Callable[[str], openai.AsyncOpenAI], model: str, refused: bool
) -> None:
    client = routes("vllm")
    if not refused:
        assert (await ask(client, model, LATER, stream=True))["message"]
        return
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(client, model, LATER, stream=True)
    body = bad_request(caught)
    assert body["message"] == "System message must be at the beginning."
    assert body["type"] == "BadRequestError"


async def test_the_responses_api_takes_a_developer_item_anywhere_and_refuses_unknown_roles(
    openai_client: openai.AsyncOpenAI,
) -> None:
    items: list[Any] = [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"type": "message", "role": "developer", "content": "Answer in one sentence."},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "user", "content": "And tomorrow?"},
    ]
    reply = await openai_client.responses.create(model="gpt-5", input=items)
    assert reply.status == "completed"
    with pytest.raises(openai.BadRequestError) as caught:
        await openai_client.responses.create(
            model="gpt-5",
            input=[*items, {"type": "message", "role": "tool", "content": "x"}],  # type: ignore[list-item]
        )
    body = bad_request(caught)
    assert body["param"] == "input[4].role" and body["code"] == "invalid_value"


async def test_deepseek_refuses_a_content_array(openai_client: openai.AsyncOpenAI) -> None:
    parts = [{"type": "text", "text": "What's the weather?"}, {"type": "text", "text": "Be brief."}]
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(
            openai_client, "deepseek-chat", [{"role": "user", "content": parts}], stream=False
        )
    message = bad_request(caught)["message"]
    assert message.startswith(
        "Failed to deserialize the JSON body into the target type: messages[0]: invalid type: "
        "sequence, expected a string at line 1 column "
    )
    joined = [{"role": "user", "content": "What's the weather?\n\nBe brief."}]
    assert (await ask(openai_client, "deepseek-chat", joined, stream=False))["message"]
