"""The emulator's Claude as the service is today, through the unmodified `anthropic` SDK: each
model's thinking types and defaults, preserved thinking's prefix check (its 400, `drop_block`
and `input_transformations`), model readability, account binding, compaction, forced tool
choice, media and JSON outputs."""

from __future__ import annotations

import base64
import json
from typing import Any

import anthropic
import pytest

from thinkagent.emulator import Emulator

from .test_anthropic import ask, bad_request, dump, results_for
from .tools import QUESTION

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

BINDING = {"anthropic-beta": "thinking-binding-controls-2026-08-01"}
DROP = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
SYSTEM = "Be brief."


async def loop(
    client: anthropic.AsyncAnthropic, model: str = "claude-opus-5-5", **kw: Any
) -> list[Any]:
    """The weather loop run to its answer, then a new question: every assistant turn kept."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    for _ in range(4):
        reply = await ask(client, messages, model=model, system=SYSTEM, **kw)
        messages.append({"role": "assistant", "content": dump(reply)})
        if reply.stop_reason != "tool_use":
            break
        messages.append(results_for(reply))
    messages.append({"role": "user", "content": "And in Lyon?"})
    return messages


@pytest.mark.parametrize(
    ("model", "thinking", "message"),
    [
        (
            "claude-fable-5-2",
            {"type": "enabled", "budget_tokens": 2048},
            '"thinking.type.enabled" is not supported for this model.',
        ),
        (
            "claude-opus-5-5",
            {"type": "disabled"},
            '"thinking.type.disabled" is not supported for this model.',
        ),
        (
            "claude-sonnet-4-5",
            {"type": "adaptive"},
            "adaptive thinking is not supported on this model",
        ),
        (
            "claude-mythos-preview",
            {"type": "disabled"},
            "Thinking defaults to adaptive mode when not specified",
        ),
        ("claude-sonnet-5-5", {"type": "disabled"}, '"thinking.type.between_tools"'),
        (
            "claude-opus-5",
            {"type": "between_tools"},
            '"thinking.type.between_tools" is not supported',
        ),
        (
            "claude-opus-5",
            {"type": "disabled", "display": "omitted"},
            "thinking.disabled.display: Extra inputs are not permitted",
        ),
    ],
)
async def test_each_model_takes_its_own_thinking(
    anthropic_client: anthropic.AsyncAnthropic, model: str, thinking: Any, message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client, [{"role": "user", "content": "Hi"}], model=model, thinking=thinking
        )
    assert message in bad_request(exc)


async def test_defaults_by_model(anthropic_client: anthropic.AsyncAnthropic) -> None:
    hi = [{"role": "user", "content": QUESTION}]
    assert (await ask(anthropic_client, hi, model="claude-opus-4-7")).content[0].type != "thinking"
    opus = await ask(anthropic_client, hi, model="claude-opus-5")
    assert opus.content[0].type == "thinking" and opus.content[0].thinking == ""
    visible = await ask(
        anthropic_client, hi, model="claude-sonnet-4-6", thinking={"type": "adaptive"}
    )
    assert visible.content[0].thinking
    effort = await ask(
        anthropic_client,
        hi,
        model="claude-opus-5",
        thinking={"type": "disabled"},
        output_config={"effort": "high"},
    )
    assert effort.content[0].type != "thinking"
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            hi,
            model="claude-opus-5",
            thinking={"type": "disabled"},
            output_config={"effort": "max"},
        )
    assert "effort" in bad_request(exc)


async def test_between_tools_thinks_only_between_tool_calls(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = await ask(
        anthropic_client, messages, model="claude-sonnet-5-5", thinking={"type": "between_tools"}
    )
    assert first.content[0].type != "thinking"
    second = await ask(
        anthropic_client,
        [*messages, first.to_param(), results_for(first)],
        model="claude-sonnet-5-5",
        thinking={"type": "between_tools"},
    )
    assert second.content[0].type == "thinking" and second.content[0].signature


async def test_display_updates_needs_its_beta(anthropic_client: anthropic.AsyncAnthropic) -> None:
    hi = [{"role": "user", "content": QUESTION}]
    updates = {"type": "adaptive", "display": "updates"}
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, hi, model="claude-opus-5-5", thinking=updates)
    assert (
        bad_request(exc) == "thinking.adaptive.display: Input should be 'summarized' or 'omitted'"
    )
    beta = {"anthropic-beta": "thinking-display-updates-2026-08-18"}
    reply = await ask(
        anthropic_client, hi, model="claude-opus-5-5", thinking=updates, extra_headers=beta
    )
    assert reply.content[0].thinking


async def test_an_interleaved_budget_may_exceed_max_tokens(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    hi = [{"role": "user", "content": QUESTION}]
    big = {"type": "enabled", "budget_tokens": 16384}
    with pytest.raises(anthropic.BadRequestError):
        await ask(anthropic_client, hi, thinking=big, max_tokens=8192)
    beta = {"anthropic-beta": "interleaved-thinking-2025-05-14"}
    reply = await ask(anthropic_client, hi, thinking=big, max_tokens=8192, extra_headers=beta)
    assert reply.content[0].type == "thinking"


async def test_forced_tool_choice_where_it_is_refused(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    hi = [{"role": "user", "content": QUESTION}]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, hi, model="claude-opus-5-5", tool_choice={"type": "any"})
    assert (
        bad_request(exc) == 'tool_choice: type "tool" and "any" are not supported for this model.'
    )
    forced = await ask(
        anthropic_client, hi, thinking={"type": "adaptive"}, tool_choice={"type": "any"}
    )
    assert forced.content[-1].type == "tool_use"


async def test_an_exact_replay_verifies_every_earlier_block(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages = await loop(anthropic_client)
    assert (
        sum(
            b["type"] == "thinking"
            for m in messages
            if m["role"] == "assistant"
            for b in m["content"]
        )
        >= 3
    )
    reply = await ask(anthropic_client, messages, model="claude-opus-5-5", system=SYSTEM)
    assert reply.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("system", "The `system` prompt changed"),
        ("tools", "The `tools` changed"),
        ("message", "The content before the block changed"),
        ("omitted", "A thinking block before it is missing or out of order"),
    ],
)
async def test_a_changed_prefix_is_bound_to_a_different_conversation(
    anthropic_client: anthropic.AsyncAnthropic, change: str, said: str
) -> None:
    messages = await loop(anthropic_client)
    options: dict[str, Any] = {"model": "claude-opus-5-5", "system": SYSTEM}
    if change == "system":
        options["system"] = SYSTEM + " Use metric units."
    elif change == "tools":
        options["tools"] = tools_plus_one()
    elif change == "message":
        messages[0] = {"role": "user", "content": QUESTION + " Thanks."}
    else:
        del messages[1]["content"][0]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, messages, **options)
    message = bad_request(exc)
    first = "messages.1.content.0" if change != "omitted" else "messages.3.content.0"
    assert message.startswith(
        f"{first}: Invalid `signature` in `thinking` block. The block is bound to a different "
        "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` "
        'to "drop_block". That setting requires the `thinking-binding-controls-2026-08-01` value '
        "in the `anthropic-beta` header."
    )
    assert said in message


def tools_plus_one() -> list[dict[str, Any]]:
    from .tools import ANTHROPIC_TOOLS

    extra = {"name": "get_news", "description": "Headlines.", "input_schema": {"type": "object"}}
    return [*ANTHROPIC_TOOLS, extra]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_drop_block_drops_and_lists_what_it_dropped(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    messages = await loop(anthropic_client)
    changed = SYSTEM + " Use metric units."
    reply = await ask(
        anthropic_client,
        messages,
        stream=stream,
        model="claude-opus-5-5",
        system=changed,
        thinking=DROP,
        extra_headers=BINDING,
    )
    dropped = reply.model_extra["input_transformations"]  # type: ignore[index]
    paths = [d["path"] for d in dropped]
    blocks = [
        f"messages.{i}.content.{j}"
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        for j, b in enumerate(m["content"])
        if b["type"] == "thinking"
    ]
    assert paths == blocks
    assert {d["reason"] for d in dropped} == {"prefix_binding_mismatch"}
    # an `error` setting: the 400, without the beta sentence
    with pytest.raises(anthropic.BadRequestError) as exc:
        strict = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
        await ask(
            anthropic_client,
            messages,
            model="claude-opus-5-5",
            system=changed,
            thinking=strict,
            extra_headers=BINDING,
        )
    assert "bound to a different conversation" in bad_request(exc)
    assert "requires the" not in bad_request(exc)
    # under the beta, every response lists them, even none
    same = await ask(
        anthropic_client, messages, model="claude-opus-5-5", system=SYSTEM, extra_headers=BINDING
    )
    assert same.model_extra["input_transformations"] == []  # type: ignore[index]


async def test_binding_controls_need_their_beta(anthropic_client: anthropic.AsyncAnthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [{"role": "user", "content": "Hi"}],
            model="claude-opus-5-5",
            thinking=DROP,
        )
    assert bad_request(exc) == "thinking.adaptive.block_binding: Extra inputs are not permitted"


async def test_a_tampered_signature_is_never_dropped(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages = await loop(anthropic_client)
    block = messages[1]["content"][0]
    block["signature"] = (
        block["signature"][:40]
        + ("A" if block["signature"][40] != "A" else "B")
        + block["signature"][41:]
    )
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            messages,
            model="claude-opus-5-5",
            system=SYSTEM,
            thinking=DROP,
            extra_headers=BINDING,
        )
    assert bad_request(exc) == "messages.1.content.0: Invalid `signature` in `thinking` block"


async def test_thinking_the_model_cannot_read_is_dropped_silently(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages = await loop(anthropic_client, model="claude-fable-5-1")
    reply = await ask(anthropic_client, messages, model="claude-opus-5-5", system=SYSTEM)
    assert reply.stop_reason == "tool_use"
    listed = await ask(
        anthropic_client, messages, model="claude-opus-5-5", system=SYSTEM, extra_headers=BINDING
    )
    reasons = {d["reason"] for d in listed.model_extra["input_transformations"]}  # type: ignore[index]
    assert reasons == {"model_binding_mismatch"}


async def test_sonnet_5_5_thinking_stays_in_its_account(emu: Emulator) -> None:
    mine = emu.anthropic_client(api_key="account-one", max_retries=0)
    theirs = emu.anthropic_client(api_key="account-two", max_retries=0)
    messages = await loop(mine, model="claude-sonnet-5-5")
    reply = await ask(
        theirs, messages, model="claude-sonnet-5-5", system=SYSTEM, extra_headers=BINDING
    )
    assert {d["reason"] for d in reply.model_extra["input_transformations"]} == {
        "organization_binding_mismatch"
    }  # type: ignore[index]
    again = await ask(
        mine, messages, model="claude-sonnet-5-5", system=SYSTEM, extra_headers=BINDING
    )
    assert again.model_extra["input_transformations"] == []  # type: ignore[index]
    await mine.close()
    await theirs.close()


COMPACT = {
    "edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}]
}
COMPACT_BETA = {"anthropic-beta": "compact-2026-01-12"}


async def test_compaction_past_its_trigger(anthropic_client: anthropic.AsyncAnthropic) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "Background to remember. " * 10000},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": QUESTION},
    ]
    options: dict[str, Any] = {
        "model": "claude-opus-5-5",
        "system": SYSTEM,
        "extra_headers": COMPACT_BETA,
        "extra_body": {"context_management": COMPACT},
    }
    first = await ask(anthropic_client, messages, **options)
    compaction = first.content[0].model_dump(exclude_unset=True)
    sealed = compaction.pop("encrypted_content")
    assert compaction == {"type": "compaction", "content": QUESTION}
    assert isinstance(sealed, str) and len(sealed) > 100
    assert first.content[1].type == "thinking"
    # streamed: its start, one delta with the whole summary and its encrypted content, its stop
    events = await anthropic_client.messages.create(
        messages=messages, stream=True, max_tokens=4096, **options
    )
    raw = [e.model_dump(exclude_unset=True) async for e in events]
    raw = [e for e in raw if e["type"].startswith("content_block") and e["index"] == 0]
    assert raw[0]["content_block"] == {"type": "compaction", "content": ""}
    assert raw[1]["delta"] == {
        "type": "compaction_delta",
        "content": QUESTION,
        "encrypted_content": sealed,
    }
    assert raw[2]["type"] == "content_block_stop"
    replayed = [*messages, {"role": "assistant", "content": dump(first)}, results_for(first)]
    second = await ask(anthropic_client, replayed, **options)
    assert second.stop_reason == "tool_use"
    # the thinking after the compaction block is bound to it: leave it out and it fails
    without = [*messages, {"role": "assistant", "content": dump(first)[1:]}, results_for(first)]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, without, **options)
    assert "bound to a different conversation" in bad_request(exc)


async def test_compaction_settings_are_checked(anthropic_client: anthropic.AsyncAnthropic) -> None:
    hi = [{"role": "user", "content": "Hi"}]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, hi, extra_body={"context_management": COMPACT})
    assert bad_request(exc) == "context_management: Extra inputs are not permitted"
    low = {
        "edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 1000}}]
    }
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client, hi, extra_headers=COMPACT_BETA, extra_body={"context_management": low}
        )
    assert "greater than or equal to 50000" in bad_request(exc)


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x01" * 300).decode()


async def test_images_and_documents(anthropic_client: anthropic.AsyncAnthropic) -> None:
    def image(data: str, media_type: str = "image/png") -> dict[str, Any]:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }

    content = [
        {"type": "text", "text": "What are these?"},
        image(PNG),
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Hello"},
        },
    ]
    reply = await ask(anthropic_client, [{"role": "user", "content": content}], tools=[])
    assert "308 bytes" in reply.content[-1].text and "5 bytes" in reply.content[-1].text
    big = base64.b64encode(b"\x00" * (5 * 1024 * 1024 + 1)).decode()
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, [{"role": "user", "content": [image(big)]}], tools=[])
    assert bad_request(exc) == (
        "messages.0.content.0.source.base64: image exceeds 5 MB maximum: 5242881 bytes > 5242880 bytes"
    )
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client, [{"role": "user", "content": [image(PNG, "image/bmp")]}], tools=[]
        )
    assert "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'" in bad_request(
        exc
    )


async def test_json_outputs(anthropic_client: anthropic.AsyncAnthropic) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    reply = await ask(
        anthropic_client,
        [{"role": "user", "content": "What's the weather in Paris?"}],
        tools=[],
        output_config={"format": {"type": "json_schema", "schema": schema}},
    )
    assert json.loads(reply.content[-1].text) == {"city": "Paris"}
