"""The emulator's Claude of the whole reasoning chain, through the unmodified `anthropic` SDK:
mid-conversation system messages (placement, the models that refuse them, `clear_at`, tool
changes and their error codes, deferred tools, an appended one against an edited one under the
prefix check), server-side fallback (the seam block, moved or left out), refusals and their
`stop_details`, the credit token, compaction's `encrypted_content`, a paused server tool loop,
and the same system messages on Bedrock Converse."""

from __future__ import annotations

import copy
import json
from typing import Any

import anthropic
import pytest
from botocore.exceptions import ClientError

from thinkagent.emulator import Emulator, Reply, ToolCallSpec

from .test_anthropic import ask, bad_request, dump, results_for
from .tools import ANTHROPIC_TOOLS, BEDROCK_TOOLS, QUESTION

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

OPUS = "claude-opus-5-5"
SYSTEM = "Be brief."
TOOL_CHANGES = {"anthropic-beta": "mid-conversation-tool-changes-2026-07-01"}
CLEAR_AT = {"anthropic-beta": "mid-conversation-system-clear-at-2026-08-21"}
FALLBACKS = {"anthropic-beta": "server-side-fallback-2026-06-01"}
CREDIT = {"anthropic-beta": "fallback-credit-2026-07-01"}


async def first_loop(client: anthropic.AsyncAnthropic, **kw: Any) -> list[Any]:
    """The weather question asked, answered by a tool call, its result sent back."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    reply = await ask(client, messages, model=OPUS, system=SYSTEM, **kw)
    return [*messages, {"role": "assistant", "content": dump(reply)}, results_for(reply)]


def error_code(exc: pytest.ExceptionInfo[anthropic.BadRequestError]) -> str | None:
    body = exc.value.body
    assert isinstance(body, dict)
    return body["error"].get("details", {}).get("error_code")


# --- system messages ----------------------------------------------------------------------


async def test_an_appended_system_message_keeps_earlier_thinking_valid(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages = await first_loop(anthropic_client)
    note = {"role": "system", "content": "From now on, answer in French."}
    reply = await ask(anthropic_client, [*messages, note], model=OPUS, system=SYSTEM)
    assert reply.content[0].type == "thinking"
    # the model reads it (the brain quotes the system text it was given)
    after = [*messages, note, {"role": "assistant", "content": dump(reply)}, results_for(reply)]
    assert (await ask(anthropic_client, after, model=OPUS, system=SYSTEM)).stop_reason
    # an edited one is an edit: the thinking after it no longer verifies
    edited = copy.deepcopy(after)
    edited[3] = {"role": "system", "content": "From now on, answer in German."}
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, edited, model=OPUS, system=SYSTEM)
    assert "messages.4.content.0" in bad_request(exc)
    assert "bound to a different conversation" in bad_request(exc)
    # and removing one already sent too
    removed = [m for i, m in enumerate(after) if i != 3]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, removed, model=OPUS, system=SYSTEM)
    assert "bound to a different conversation" in bad_request(exc)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda m: [{"role": "system", "content": "Hi"}, *m],
            "messages.0: a system message cannot be the first message",
        ),
        (
            lambda m: [*m[:2], {"role": "system", "content": "Hi"}, m[2]],
            "messages.2: a system message must immediately follow a `user` message",
        ),
        (
            lambda m: [*m, {"role": "system", "content": "Hi"}, {"role": "user", "content": "Q"}],
            "messages.3: a system message must be followed by an `assistant` message",
        ),
        (
            lambda m: [*m, {"role": "system", "content": "A"}, {"role": "system", "content": "B"}],
            "messages.3: a system message must be followed by an `assistant` message",
        ),
    ],
    ids=["first", "between-tool-use-and-result", "before-a-user-turn", "two-in-a-row"],
)
async def test_a_system_message_out_of_place_is_refused(
    anthropic_client: anthropic.AsyncAnthropic, build: Any, message: str
) -> None:
    messages = await first_loop(anthropic_client)
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, build(messages), model=OPUS)
    assert bad_request(exc).startswith(message)


@pytest.mark.parametrize("model", ["claude-sonnet-5", "claude-sonnet-4-6", "claude-opus-4-7"])
async def test_models_without_system_messages_refuse_them(
    anthropic_client: anthropic.AsyncAnthropic, model: str
) -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "system", "content": "Be brief."}]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, messages, model=model, tools=[])
    assert bad_request(exc) == "role 'system' is not supported on this model"
    accepted = await ask(anthropic_client, messages, model="claude-opus-4-8", tools=[])
    assert accepted.stop_reason == "end_turn"


async def test_clear_at_is_checked(anthropic_client: anthropic.AsyncAnthropic) -> None:
    hi: dict[str, Any] = {"role": "user", "content": "Hi"}
    scoped = {"role": "system", "content": "Be brief.", "clear_at": "next_user_message"}
    cases: list[tuple[list[Any], dict[str, str], str]] = [
        ([hi, scoped], {}, "messages.1.clear_at: Extra inputs are not permitted"),
        (
            [{**hi, "clear_at": "never"}],
            CLEAR_AT,
            "messages.0.clear_at: clear_at is only permitted on role 'system' messages",
        ),
        (
            [hi, {**scoped, "clear_at": "later"}],
            CLEAR_AT,
            "messages.1.clear_at: Input should be 'next_user_message' or 'never'",
        ),
        (
            [
                hi,
                {
                    **scoped,
                    "content": [
                        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "x"}}
                    ],
                },
            ],
            {"anthropic-beta": f"{CLEAR_AT['anthropic-beta']},{TOOL_CHANGES['anthropic-beta']}"},
            "messages.1: a turn-scoped system message supports text blocks only "
            "(clear_at: 'next_user_message')",
        ),
    ]
    for messages, headers, message in cases:
        with pytest.raises(anthropic.BadRequestError) as exc:
            await ask(anthropic_client, messages, model=OPUS, extra_headers=headers)
        assert bad_request(exc) == message
    reply = await ask(anthropic_client, [hi, scoped], model=OPUS, tools=[], extra_headers=CLEAR_AT)
    assert reply.stop_reason == "end_turn"


NEWS = {
    "name": "get_news",
    "description": "Headlines for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def change(kind: str, name: str) -> dict[str, Any]:
    return {"type": kind, "tool": {"type": "tool_reference", "name": name}}


async def test_tool_changes_by_reference(anthropic_client: anthropic.AsyncAnthropic) -> None:
    """A deferred tool is hidden until a system message adds it; added, it leaves the thinking
    before it valid; a removed tool is no longer called; a change needs the beta and a tool
    defined at that point (`tool_reference_unresolved`)."""
    deferred = [*ANTHROPIC_TOOLS, {**NEWS, "defer_loading": True}]
    question = [{"role": "user", "content": "What are the news in Paris?"}]
    hidden = await ask(anthropic_client, question, model=OPUS, tools=deferred)
    assert [b.name for b in hidden.content if b.type == "tool_use"] != ["get_news"]
    messages = await first_loop(anthropic_client)  # produced without the deferred tool
    messages.append({"role": "user", "content": "What are the news in Paris?"})
    add = {"role": "system", "content": [change("tool_addition", "get_news")]}
    reply = await ask(
        anthropic_client,
        [*messages, add],
        model=OPUS,
        system=SYSTEM,
        tools=deferred,
        extra_headers=TOOL_CHANGES,
    )
    assert [b.name for b in reply.content if b.type == "tool_use"] == ["get_news"]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, [*messages, add], model=OPUS, system=SYSTEM, tools=deferred)
    assert "Input tag 'tool_addition'" in bad_request(exc)
    unknown = {"role": "system", "content": [change("tool_addition", "get_stock")]}
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [*messages, unknown],
            model=OPUS,
            system=SYSTEM,
            tools=deferred,
            extra_headers=TOOL_CHANGES,
        )
    assert error_code(exc) == "tool_reference_unresolved"
    remove = {"role": "system", "content": [change("tool_removal", "get_weather")]}
    weather = [*messages[:3], {"role": "user", "content": QUESTION}, remove]
    after = await ask(
        anthropic_client, weather, model=OPUS, system=SYSTEM, extra_headers=TOOL_CHANGES
    )
    assert "get_weather" not in [b.name for b in after.content if b.type == "tool_use"]


async def test_a_tool_defined_by_value_needs_its_beta_and_a_free_name(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    hi = [{"role": "user", "content": "What are the news in Paris?"}]
    inline = {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": NEWS}}
    beta = {"anthropic-beta": "inline-tools-2026-09-15"}
    reply = await ask(
        anthropic_client,
        [*hi, {"role": "system", "content": [inline]}],
        model=OPUS,
        extra_headers=beta,
    )
    assert [b.name for b in reply.content if b.type == "tool_use"] == ["get_news"]
    clash = copy.deepcopy(inline)
    clash["tool"]["definition"]["name"] = "get_weather"
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [*hi, {"role": "system", "content": [clash]}],
            model=OPUS,
            extra_headers=beta,
        )
    assert error_code(exc) == "tool_name_conflict"
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, [*hi, {"role": "system", "content": [inline]}], model=OPUS)
    assert "Input tag 'tool_definition'" in bad_request(exc)


# --- server-side fallback, refusals --------------------------------------------------------


def refusing(emu: Emulator, then: Reply | None = None) -> None:
    first = Reply(
        thinking="This looks risky.", text="Let me", stop_reason="refusal", refusal="cyber"
    )
    emu.script("anthropic", [first, *([then] if then else [])])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_fallback_continues_the_turn_after_a_seam(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    refusing(emu, Reply(thinking="I can answer this.", text="It is sunny."))
    messages = [{"role": "user", "content": QUESTION}]
    fallbacks = [{"model": "claude-opus-4-8"}]
    reply = await ask(
        anthropic_client,
        messages,
        model=OPUS,
        tools=[],
        stream=stream,
        extra_headers=FALLBACKS,
        extra_body={"fallbacks": fallbacks},
    )
    content = dump(reply)
    assert [b["type"] for b in content] == ["thinking", "text", "fallback", "thinking", "text"]
    assert content[2] == {
        "type": "fallback",
        "from": {"model": OPUS},
        "to": {"model": "claude-opus-4-8"},
        "trigger": {"type": "refusal", "category": "cyber"},
    }
    assert reply.stop_reason == "end_turn"
    if not stream:  # the SDK's stream accumulator keeps the usage fields it knows
        iterations = reply.usage.model_extra["iterations"]  # type: ignore[index]
        assert [i["type"] for i in iterations] == ["message", "fallback_message"]
    # sent back as it came, the turn verifies; the seam moved or left out does not
    later = [
        *messages,
        {"role": "assistant", "content": content},
        {"role": "user", "content": "And in Lyon?"},
    ]
    options: dict[str, Any] = {"model": OPUS, "tools": []}
    assert (await ask(anthropic_client, later, **options)).stop_reason == "end_turn"
    dropped = copy.deepcopy(later)
    del dropped[1]["content"][2]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, dropped, **options)
    assert "thinking from two models without the `fallback` block" in bad_request(exc)
    reordered = copy.deepcopy(later)
    blocks = reordered[1]["content"]
    reordered[1]["content"] = [blocks[0], blocks[3], blocks[2], blocks[1], blocks[4]]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, reordered, **options)
    assert "messages.1.content.1: thinking from two models" in bad_request(exc)


async def test_fallbacks_are_checked(anthropic_client: anthropic.AsyncAnthropic) -> None:
    hi = [{"role": "user", "content": "Hi"}]
    four = [{"model": "claude-opus-4-8"}] * 4
    cases = [
        ({}, {"fallbacks": "default"}, "fallbacks: Extra inputs are not permitted"),
        (FALLBACKS, {"fallbacks": four}, "fallbacks: List should have at least 1 item"),
        (FALLBACKS, {"fallbacks": [{"model": OPUS, "top_k": 3}]}, "fallbacks.0.top_k"),
        (
            {"anthropic-beta": f"{FALLBACKS['anthropic-beta']},{CREDIT['anthropic-beta']}"},
            {"fallbacks": "default", "fallback_credit_token": "x"},
            "fallback_credit_token: cannot be combined with `fallbacks`",
        ),
    ]
    for headers, body, message in cases:
        with pytest.raises(anthropic.BadRequestError) as exc:
            await ask(
                anthropic_client, hi, model=OPUS, tools=[], extra_headers=headers, extra_body=body
            )
        assert bad_request(exc).startswith(message)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_refusal_has_stop_details_and_a_credit_token_to_redeem(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    refusing(emu)
    messages = [{"role": "user", "content": QUESTION}]
    reply = await ask(
        anthropic_client, messages, model=OPUS, tools=[], stream=stream, extra_headers=CREDIT
    )
    assert reply.stop_reason == "refusal"
    details = reply.stop_details.model_dump()
    token = details["fallback_credit_token"]
    assert details["category"] == "cyber" and details["explanation"]
    assert isinstance(token, str) and details["fallback_has_prefill_claim"] is True
    # the retry redeems it, with the partial turn as a prefill without its trailing thinking
    partial = [b for b in dump(reply) if b["type"] != "thinking"]
    retry = [*messages, {"role": "assistant", "content": partial}]
    body = {"fallback_credit_token": {"token": token, "mode": "best_effort"}}
    again = await ask(
        anthropic_client,
        retry,
        model="claude-fable-5-1",
        tools=[],
        extra_headers=CREDIT,
        extra_body=body,
    )
    assert again.stop_reason == "end_turn"
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [*messages, {"role": "assistant", "content": [*partial, dump(reply)[0]]}],
            model="claude-fable-5-1",
            tools=[],
            extra_headers=CREDIT,
            extra_body=body,
        )
    assert "cannot end with a `thinking` block" in bad_request(exc)
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            retry,
            model="claude-fable-5-1",
            tools=[],
            extra_body={"fallback_credit_token": token + "x"},
        )
    assert bad_request(exc) == "fallback_credit_token: Invalid token"
    # without the credit beta, no token
    refusing(emu)
    plain = await ask(anthropic_client, messages, model=OPUS, tools=[])
    assert plain.stop_details.model_dump()["fallback_credit_token"] is None


# --- compaction, a paused turn -----------------------------------------------------------

COMPACT = {
    "edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}]
}


async def test_compaction_encrypted_content_goes_back_verbatim(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "Background to remember. " * 10000},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": QUESTION},
    ]
    options: dict[str, Any] = {
        "model": OPUS,
        "extra_headers": {"anthropic-beta": "compact-2026-01-12"},
        "extra_body": {"context_management": COMPACT},
    }
    first = await ask(anthropic_client, messages, **options)
    replayed = [*messages, {"role": "assistant", "content": dump(first)}, results_for(first)]
    assert (await ask(anthropic_client, replayed, **options)).content
    altered = copy.deepcopy(replayed)
    altered[3]["content"][0]["encrypted_content"] = (
        "x" + altered[3]["content"][0]["encrypted_content"][1:]
    )
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, altered, **options)
    assert bad_request(exc) == (
        "messages.3.content.0: Invalid `encrypted_content` in `compaction` block"
    )
    empty = copy.deepcopy(replayed)
    empty[3]["content"][0]["content"] = ""
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, empty, **options)
    assert "compaction.content: String should have at least 1 character" in bad_request(exc)
    # a failed compaction (content null) goes back as a no-op
    failed = [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "compaction", "content": None},
                {"type": "text", "text": "Hello."},
            ],
        },
        {"role": "user", "content": QUESTION},
    ]
    assert (await ask(anthropic_client, failed, model=OPUS)).stop_reason == "tool_use"


WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_scripted_server_tool_loop_pauses_and_resumes(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    emu.script(
        "anthropic",
        [
            Reply(
                text="Searching.",
                tool_calls=[ToolCallSpec("web_search", {"query": "Paris"})],
                stop_reason="pause_turn",
            )
        ],
    )
    messages: list[Any] = [{"role": "user", "content": "News in Paris?"}]
    tools = [*ANTHROPIC_TOOLS, WEB_SEARCH]
    paused = await ask(anthropic_client, messages, model=OPUS, tools=tools, stream=stream)
    assert paused.stop_reason == "pause_turn"
    use = dump(paused)[-1]
    assert use["type"] == "server_tool_use" and use["id"].startswith("srvtoolu_01")
    assert use["name"] == "web_search" and use["input"] == {"query": "Paris"}
    # sent back as it is, the turn continues
    resumed = await ask(
        anthropic_client,
        [*messages, {"role": "assistant", "content": dump(paused)}],
        model=OPUS,
        tools=tools,
    )
    assert resumed.stop_reason in ("end_turn", "tool_use")


# --- Bedrock Converse ----------------------------------------------------------------------

CONVERSE_OPUS = "anthropic.claude-opus-5-5-v1:0"


def converse(client: Any, messages: list[Any], model: str = CONVERSE_OPUS) -> Any:
    return client.converse(
        modelId=model,
        messages=messages,
        system=[{"text": SYSTEM}],
        toolConfig=BEDROCK_TOOLS,
        inferenceConfig={"maxTokens": 4096},
    )


def converse_results(reply: Any) -> dict[str, Any]:
    content = reply["output"]["message"]["content"]
    return {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": b["toolUse"]["toolUseId"], "content": [{"text": "sunny"}]}}
            for b in content
            if "toolUse" in b
        ],
    }


def test_converse_takes_system_messages_and_tool_changes(bedrock_client: Any) -> None:
    messages: list[Any] = [{"role": "user", "content": [{"text": QUESTION}]}]
    first = converse(bedrock_client, messages)
    messages += [first["output"]["message"], converse_results(first)]
    note = {
        "role": "system",
        "content": [
            {"text": "From now on, answer in French."},
            {"toolRemoval": {"tool": {"type": "tool_reference", "name": "get_time"}}},
        ],
    }
    reply = converse(bedrock_client, [*messages, note])
    assert "reasoningContent" in reply["output"]["message"]["content"][0]
    after = [
        *messages,
        note,
        reply["output"]["message"],
        {"role": "user", "content": [{"text": "And Lyon?"}]},
    ]
    assert converse(bedrock_client, after)["stopReason"]
    edited = json.loads(json.dumps(after, default=str))
    edited[3]["content"][0]["text"] = "From now on, answer in German."
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, edited)
    assert "bound to a different conversation" in str(exc.value)
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, [*messages, note], model="anthropic.claude-sonnet-5-v1:0")
    assert "role 'system' is not supported on this model" in str(exc.value)
