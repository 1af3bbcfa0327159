"""The Responses wire API through the unmodified official SDK (AsyncOpenAI,
AsyncAzureOpenAI): reasoning items with encrypted content, their replay rules and scopes."""

from __future__ import annotations

import copy
import json
from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator, Reply
from thinkagent.emulator.openai.responses import open_reasoning, seal_reasoning
from thinkagent.emulator.signing import Signer

from .tools import QUESTION, RESPONSES_TOOLS, TOOL_OUTPUT

USER = {"role": "user", "content": QUESTION}
KW: dict[str, Any] = {
    "model": "gpt-5",
    "tools": RESPONSES_TOOLS,
    "reasoning": {"effort": "low", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
    "store": False,
}


async def create(
    client: openai.AsyncOpenAI, items: list[Any], mode: str = "json", **kw: Any
) -> Any:
    options = {**KW, **kw}
    if mode == "json":
        return await client.responses.create(input=items, **options)
    if mode == "helper":
        async with client.responses.stream(input=items, **options) as stream:
            return await stream.get_final_response()
    events = await client.responses.create(input=items, stream=True, **options)
    done = [e async for e in events if e.type == "response.completed"]
    assert len(done) == 1
    return done[0].response


def replayable(response: Any) -> list[dict[str, Any]]:
    """The output items as a client replays them (exactly, minus read-only status)."""
    items = [i.model_dump(exclude_none=True) for i in response.output]
    return [{k: v for k, v in i.items() if k != "status"} for i in items]


def outputs(response: Any) -> list[dict[str, Any]]:
    return [
        {"type": "function_call_output", "call_id": i.call_id, "output": TOOL_OUTPUT[i.name]}
        for i in response.output
        if i.type == "function_call"
    ]


def error_of(exc: pytest.ExceptionInfo[Any]) -> dict[str, Any]:
    body = exc.value.body
    assert isinstance(body, dict)
    return body


@pytest.mark.parametrize("mode", ["json", "sse", "helper"])
async def test_three_turn_tool_loop_with_encrypted_reasoning(
    emu: Emulator, openai_client: openai.AsyncOpenAI, mode: str
) -> None:
    items: list[Any] = [USER]
    first = await create(openai_client, items, mode)
    assert first.status == "completed"
    assert [i.type for i in first.output] == ["reasoning", "function_call"]
    reasoning, call = first.output
    assert reasoning.id.startswith("rs_")
    assert reasoning.encrypted_content.startswith("gAAAAA")
    assert len(reasoning.encrypted_content) > 300
    assert QUESTION in reasoning.summary[0].text
    assert reasoning.summary[0].type == "summary_text"
    assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Paris"})
    assert call.id.startswith("fc_")
    assert call.call_id.startswith("call_")
    assert first.usage.output_tokens_details.reasoning_tokens > 0

    items += [*replayable(first), *outputs(first)]
    second = await create(openai_client, items, mode)
    assert [i.type for i in second.output] == ["reasoning", "function_call"]
    assert "sunny, 21 C" in second.output[0].summary[0].text
    assert json.loads(second.output[1].arguments) == {"city": "Paris", "format": "24h"}

    items += [*replayable(second), *outputs(second)]
    third = await create(openai_client, items, mode)
    assert [i.type for i in third.output] == ["reasoning", "message"]
    answer = third.output[1]
    assert answer.role == "assistant"
    assert answer.content[0].type == "output_text"
    assert "sunny, 21 C" in answer.content[0].text
    assert "14:05" in third.output_text
    assert third.usage.total_tokens == third.usage.input_tokens + third.usage.output_tokens
    sent = [r for r in emu.requests if r.api == "openai-responses"]
    assert [r.path for r in sent] == ["/v1/responses"] * 3
    assert sent[2].body["input"][1]["encrypted_content"] == reasoning.encrypted_content


async def test_stream_events(openai_client: openai.AsyncOpenAI) -> None:
    events = [
        e async for e in await openai_client.responses.create(input=[USER], stream=True, **KW)
    ]
    kinds = [e.type for e in events]
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
    ]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    added = events[2]
    assert added.item.type == "reasoning"
    assert added.item.encrypted_content is None  # only the done event carries it
    done = next(e for e in events if e.type == "response.output_item.done")
    assert done.item.encrypted_content.startswith("gAAAAA")
    deltas = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert deltas == done.item.summary[0].text
    arguments = "".join(
        e.delta for e in events if e.type == "response.function_call_arguments.delta"
    )
    assert json.loads(arguments) == {"city": "Paris"}
    assert kinds.index("response.function_call_arguments.done") < len(kinds) - 2
    final = events[-1].response
    plain = await openai_client.responses.create(input=[USER], **KW)
    assert final.id == plain.id
    assert replayable(final) == replayable(plain)


async def test_answer_stream_events(openai_client: openai.AsyncOpenAI) -> None:
    hello = [{"role": "user", "content": "Hello!"}]
    async with openai_client.responses.stream(input=hello, **{**KW, "tools": []}) as s:
        kinds = [e.type async for e in s]
        final = await s.get_final_response()
    assert "response.content_part.added" in kinds
    assert "response.output_text.delta" in kinds
    assert "response.output_text.done" in kinds
    assert final.output_text.startswith("You asked")


async def test_orphaned_reasoning_item(openai_client: openai.AsyncOpenAI) -> None:
    first = await create(openai_client, [USER])
    reasoning = replayable(first)[0]
    for items in ([USER, reasoning, *outputs(first)], [USER, reasoning]):
        with pytest.raises(openai.BadRequestError) as exc:
            await create(openai_client, items)
        assert error_of(exc) == {
            "message": f"Item '{reasoning['id']}' of type 'reasoning' was provided without its "
            "required following item.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }


@pytest.mark.parametrize("where", ["middle", "id"])
async def test_tampered_encrypted_content(openai_client: openai.AsyncOpenAI, where: str) -> None:
    first = await create(openai_client, [USER])
    items = replayable(first)
    token = items[0]["encrypted_content"]
    if where == "middle":
        i = len(token) // 2
        items[0]["encrypted_content"] = (
            token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]
        )
    else:  # the content of another item
        items[0]["id"] = "rs_" + "0" * 48
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER, *items, *outputs(first)])
    assert error_of(exc) == {
        "message": f"The encrypted content for item {items[0]['id']} could not be verified. "
        "Reason: Encrypted content could not be decrypted or parsed.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_encrypted_content",
    }


async def test_encrypted_content_is_bound_to_its_scope(
    emu: Emulator, openai_client: openai.AsyncOpenAI, azure_client: openai.AsyncAzureOpenAI
) -> None:
    from_azure = await create(azure_client, [USER])  # type: ignore[arg-type]
    assert emu.requests[-1].path == "/openai/responses"
    assert emu.requests[-1].query == {"api-version": "2025-04-01-preview"}
    items = [USER, *replayable(from_azure), *outputs(from_azure)]
    assert (await create(azure_client, items)).status == "completed"  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, items)
    assert error_of(exc)["code"] == "invalid_encrypted_content"
    from_openai = await create(openai_client, [USER])
    with pytest.raises(openai.BadRequestError) as exc:
        await create(azure_client, [USER, *replayable(from_openai), *outputs(from_openai)])  # type: ignore[arg-type]
    assert error_of(exc)["code"] == "invalid_encrypted_content"


async def test_azure_v1_route_and_scope(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    v1 = openai.AsyncOpenAI(api_key="k", base_url=emu.url + "/openai/v1", max_retries=0)
    first = await create(v1, [USER])
    items = [USER, *replayable(first), *outputs(first)]
    assert (await create(v1, items)).status == "completed"
    await v1.close()
    assert emu.requests[-1].path == "/openai/v1/responses"
    with pytest.raises(openai.BadRequestError):
        await create(openai_client, items)


async def test_stored_items_replay_by_id(openai_client: openai.AsyncOpenAI) -> None:
    first = await create(openai_client, [USER], store=True, include=[])
    items = replayable(first)
    assert "encrypted_content" not in items[0]
    second = await create(openai_client, [USER, *items, *outputs(first)], store=True, include=[])
    assert json.loads(second.output[1].arguments) == {"city": "Paris", "format": "24h"}
    unstored = await create(
        openai_client, [USER, {"role": "user", "content": "Twice."}], include=[]
    )
    forgotten = replayable(unstored)
    with pytest.raises(openai.NotFoundError) as exc:
        await create(openai_client, [USER, *forgotten, *outputs(unstored)], include=[])
    assert error_of(exc)["message"] == (
        f"Item with id '{forgotten[0]['id']}' not found. Items are not persisted when `store` is set "
        "to false. Try again with `store` set to true, or remove this item from your input."
    )
    unknown = copy.deepcopy(items)
    unknown[0]["id"] = "rs_" + "1" * 48
    with pytest.raises(openai.NotFoundError) as exc:
        await create(openai_client, [USER, *unknown, *outputs(first)], store=True, include=[])
    assert error_of(exc)["message"] == f"Item with id '{unknown[0]['id']}' not found."


async def test_reset_forgets_stored_items(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    first = await create(openai_client, [USER], store=True, include=[])
    items = replayable(first)
    await create(openai_client, [USER, *items, *outputs(first)], store=True, include=[])
    emu.reset()
    with pytest.raises(openai.NotFoundError) as exc:
        await create(openai_client, [USER, *items, *outputs(first)], store=True, include=[])
    assert error_of(exc)["message"] == f"Item with id '{items[0]['id']}' not found."


async def test_function_call_rules(openai_client: openai.AsyncOpenAI) -> None:
    first = await create(openai_client, [USER])
    items = replayable(first)
    call_id = items[1]["call_id"]
    stray = {"type": "function_call_output", "call_id": "call_nothing", "output": "x"}
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER, *items, *outputs(first), stray])
    assert error_of(exc) == {
        "message": "No tool call found for function call output with call_id call_nothing.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER, *items])
    assert error_of(exc)["message"] == f"No tool output found for function call {call_id}."


async def test_orphan_rule_comes_before_the_missing_call_rule(
    openai_client: openai.AsyncOpenAI,
) -> None:
    first = await create(openai_client, [USER])
    reasoning = replayable(first)[0]
    with pytest.raises(openai.BadRequestError, match="following item"):
        await create(openai_client, [USER, reasoning, *outputs(first)])


async def test_summary_include_and_effort(openai_client: openai.AsyncOpenAI) -> None:
    bare = await create(openai_client, [USER], reasoning={"effort": "medium"}, include=[])
    assert bare.output[0].type == "reasoning"
    assert bare.output[0].summary == []
    assert bare.output[0].encrypted_content is None
    for mode in ("concise", "detailed"):
        summarized = await create(openai_client, [USER], reasoning={"summary": mode})
        assert summarized.output[0].summary
        assert summarized.reasoning.summary == mode
    none = await create(openai_client, [USER], model="gpt-5.1", reasoning=None)
    assert [i.type for i in none.output] == ["function_call"]  # gpt-5.1 defaults to no reasoning
    assert none.usage.output_tokens_details.reasoning_tokens == 0
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER], reasoning={"summary": "verbose"})
    assert error_of(exc)["message"] == (
        "Invalid value: 'verbose'. Supported values are: 'concise', 'detailed', and 'auto'."
    )
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER], reasoning={"effort": "none"})
    assert error_of(exc)["param"] == "reasoning.effort"
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER], model="gpt-4o")
    assert error_of(exc)["message"] == (
        "Unsupported parameter: 'reasoning.effort' is not supported with this model."
    )
    plain = await create(openai_client, [USER], model="gpt-4.1", reasoning=None, include=[])
    assert [i.type for i in plain.output] == ["function_call"]


async def test_request_validation(openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as exc:
        await create(openai_client, [USER], model="kimi-k2-thinking")
    assert error_of(exc)["code"] == "model_not_found"
    nested = [{"type": "function", "function": RESPONSES_TOOLS[0]}]
    with pytest.raises(openai.BadRequestError) as exc:
        await create(openai_client, [USER], tools=nested)
    assert error_of(exc)["message"] == "Missing required parameter: 'tools[0].name'."
    with pytest.raises(openai.NotFoundError) as exc:
        await create(openai_client, [USER], previous_response_id="resp_123")
    assert error_of(exc)["message"] == "Previous response with id 'resp_123' not found."


async def test_string_input_instructions_and_parallel_calls(
    openai_client: openai.AsyncOpenAI,
) -> None:
    response = await openai_client.responses.create(
        input="What's the weather in Paris and London?",
        instructions="Be brief.",
        **KW,
    )
    calls = [i for i in response.output if i.type == "function_call"]
    assert [json.loads(c.arguments) for c in calls] == [{"city": "Paris"}, {"city": "London"}]
    assert len({c.call_id for c in calls}) == 2
    assert response.instructions == "Be brief."
    assert "Be brief." in response.output[0].summary[0].text
    items = [
        {
            "role": "user",
            "content": [{"type": "input_text", "text": "What's the weather in Paris and London?"}],
        },
        *replayable(response),
        *[{"type": "function_call_output", "call_id": c.call_id, "output": "mild"} for c in calls],
    ]
    answer = await create(openai_client, items)
    assert answer.output[-1].type == "message"


async def test_max_output_tokens_makes_an_incomplete_response(
    openai_client: openai.AsyncOpenAI,
) -> None:
    response = await create(
        openai_client, [{"role": "user", "content": "Hello!"}], max_output_tokens=30
    )
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.usage.output_tokens == 30


async def test_scripted_reply(emu: Emulator, openai_client: openai.AsyncOpenAI) -> None:
    emu.script("openai-responses", [Reply(thinking="Short thought.", text="Scripted answer.")])
    response = await create(openai_client, [USER])
    assert response.output_text == "Scripted answer."
    assert response.output[0].summary[0].text.endswith("Short thought.")
    follow = [USER, *replayable(response), {"role": "user", "content": "And tomorrow?"}]
    assert (await create(openai_client, follow)).status == "completed"


def test_encrypted_content_codec() -> None:
    signer = Signer()
    token = seal_reasoning(signer, "openai", "rs_1", "I think.")
    assert token.startswith("gAAAAA")
    assert seal_reasoning(signer, "openai", "rs_1", "I think.") == token  # deterministic
    assert open_reasoning(signer, "openai", token) == ("rs_1", "I think.")
    assert open_reasoning(signer, "azure", token) is None
    assert open_reasoning(Signer("another secret"), "openai", token) is None
    assert open_reasoning(signer, "openai", token[:-4]) is None
    assert open_reasoning(signer, "openai", "gAAAAABencrypted-blob==") is None
