"""A conversation's next request on the OpenAI wires resumes the history pass after the turns
already over (`PerPrefix`) and sends what a fresh pass over the same history sends: on an
extension, a branch, an edited message, another adapter's settings; nothing of a dropped
conversation is kept."""

from __future__ import annotations

import gc
from typing import Any

import openai
import pytest

from thinkagent import (
    Message,
    OpaqueBlock,
    SystemNote,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from thinkagent.providers.base import ModelRequest
from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel

CLIENT = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
Model = OpenAIChatModel | OpenAIResponsesModel


def chat(dialect: str) -> OpenAIChatModel:
    return OpenAIChatModel("some-model", client=CLIENT, dialect=dialect)


def responses() -> OpenAIResponsesModel:
    return OpenAIResponsesModel("gpt-5", client=CLIENT)


def turn(k: int, scope: str, note: bool = False) -> list[Message]:
    """A prompt (with a turn-scoped note), a call with reasoning, its result, an answer with
    reasoning."""
    notes = [SystemNote(text=f"note {k}", clear_at="next_user_message")] if note else []
    return [
        Message.user([f"question {k}", *notes]),
        Message(
            role="assistant",
            parts=(
                ThinkingBlock(text=f"why {k}", id=f"rs_{k}a"),
                ToolCall(id=f"call_{k}", name="f", arguments={}),
            ),
            scope=scope,
        ),
        Message.user_results([ToolResult(call_id=f"call_{k}", name="f", content="ok")]),
        Message(
            role="assistant",
            parts=(ThinkingBlock(text=f"so {k}", id=f"rs_{k}b"), TextPart(text=f"answer {k}")),
            scope=scope,
        ),
    ]


def sent(model: Model, messages: list[Message]) -> tuple[Any, ...]:
    params, warnings = model._prepare(  # pyright: ignore[reportPrivateUsage]
        ModelRequest(messages=messages, instructions="be brief")
    )
    return params, [(w.code, w.message) for w in warnings]


def fresh(model: Model, messages: list[Message]) -> tuple[Any, ...]:
    """What an adapter with the same settings that never saw these messages sends."""
    other = chat(model.dialect.name) if isinstance(model, OpenAIChatModel) else responses()
    return sent(other, [m.model_copy() for m in messages])


MODELS = {
    "deepseek (tool_turns)": lambda: chat("deepseek"),
    "vllm (always)": lambda: chat("vllm"),
    "openai (never)": lambda: chat("openai"),
    "think_tags": lambda: chat("think_tags"),
    "responses": responses,
}


def scope_of(model: Model) -> str:
    return model.scope


@pytest.mark.parametrize("make", MODELS.values(), ids=list(MODELS))
def test_each_request_of_a_growing_conversation_sends_what_a_fresh_pass_sends(make: Any) -> None:
    model = make()
    scope = scope_of(model)
    history: list[Message] = []
    for k in range(4):
        for message in turn(k, scope, note=k % 2 == 0):
            history.append(message)
            if message.role == "user":
                assert sent(model, history) == fresh(model, history)


@pytest.mark.parametrize("make", MODELS.values(), ids=list(MODELS))
def test_a_branch_or_an_edited_message_is_passed_over_again(make: Any) -> None:
    model = make()
    scope = scope_of(model)
    history = [*turn(0, scope, note=True), *turn(1, scope), *turn(2, scope)]
    sent(model, history)  # kept: the turns before the last prompt (messages[:8])
    branches = {
        "the kept prefix alone": history[:8],
        "the kept prefix and a message that is no prompt": [*history[:8], history[3]],
        "the kept prefix continued": [*history[:8], *turn(3, scope)[:3]],
        "an edited message in the prefix": [
            *history[:5],
            history[5].model_copy(update={"parts": (TextPart(text="edited"),)}),
            *history[6:],
        ],
        "an earlier prompt": history[:5],
    }
    for name, branch in branches.items():
        assert sent(model, branch) == fresh(model, branch), name
        sent(model, history)  # back on the main line, which keeps its prefix again


def test_an_adapter_with_other_settings_keeps_its_own_prefix() -> None:
    history = [*turn(0, "deepseek"), *turn(1, "deepseek"), *turn(2, "deepseek")]
    replays, never = chat("deepseek"), chat("openai")
    for model in (replays, never, replays, never):
        assert sent(model, history) == fresh(model, history)
    assert sent(replays, history) != sent(never, history)


def test_a_compaction_item_after_the_kept_prefix_starts_what_is_sent() -> None:
    model = responses()
    scope = model.scope
    history = [*turn(0, scope), *turn(1, scope)]
    sent(model, history)
    window = OpaqueBlock(
        type="compaction",
        data={"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAAB"},
    )
    compacted = [
        *history,
        Message.user("again"),
        Message(role="assistant", parts=(window, TextPart(text="compacted")), scope=scope),
        Message.user("more"),
    ]
    assert sent(model, compacted) == fresh(model, compacted)
    params = sent(model, compacted)[0]
    assert params["input"][0]["type"] == "compaction"  # nothing before it goes
    longer = [*compacted, *turn(2, scope)]
    assert sent(model, longer) == fresh(model, longer)


def test_foreign_reasoning_counts_and_trimmed_reasoning_carry_over_the_prefix() -> None:
    model = OpenAIResponsesModel("gpt-5", client=CLIENT, store=False)
    scope = model.scope
    foreign = turn(0, "anthropic")
    trimmed = turn(1, scope)
    # a reasoning item no longer in the history: the answer followed it
    trimmed[3] = trimmed[3].model_copy(
        update={
            "parts": (TextPart(text="answer", provider_details={"reasoning_id": "rs_gone"}),),
            "provider_details": {"reasoning_context": "all_turns"},
        }
    )
    history = [*foreign, *trimmed, *turn(2, scope)]
    for end in range(1, len(history) + 1):
        if history[end - 1].role == "user":
            assert sent(model, history[:end]) == fresh(model, history[:end])


@pytest.mark.parametrize("make", MODELS.values(), ids=list(MODELS))
def test_nothing_of_a_dropped_conversation_is_kept(make: Any) -> None:
    model = make()
    history = [*turn(0, scope_of(model)), *turn(1, scope_of(model))]
    sent(model, history)
    kept = model._per_prefix._kept  # pyright: ignore[reportPrivateUsage]
    assert len(kept) == 1
    del history
    gc.collect()
    assert len(kept) == 0
