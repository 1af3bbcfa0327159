"""Claude's prompt caching in the emulator, through the official SDKs: the Claude API's
`cache_control` and Bedrock's `cachePoint` (one cache each, per account and model), the
minimum length per model, lifetimes, the 20-block lookback, what invalidates the cached
messages, the refusals (a breakpoint on thinking, more than four, a `1h` after a `5m`), and the
counts in each wire's usage, JSON and streamed."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from botocore.exceptions import ClientError

from thinkagent.emulator import Emulator
from thinkagent.emulator.caching import PrefixCache

SONNET = "claude-sonnet-4-6"
BEDROCK_SONNET = "us.anthropic.claude-sonnet-4-6-v1:0"
#: About 2,000 tokens: over Sonnet's minimum of 1,024.
SYSTEM = "Answer about the weather; name the observing station. " * 150
MARK = {"type": "ephemeral"}
TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def clocked(emu: Emulator, api: str) -> Clock:
    """Give wire `api` a cache on a clock the test moves."""
    clock = Clock()
    wire: Any = next(a for a in emu.apis if a.name == api)
    wire.cache = PrefixCache(clock=clock)
    return clock


def system(ttl: str | None = None, text: str = SYSTEM) -> list[dict[str, Any]]:
    mark = dict(MARK, ttl=ttl) if ttl else MARK
    return [{"type": "text", "text": text, "cache_control": mark}]


async def usage(client: anthropic.AsyncAnthropic, stream: bool = False, **kw: Any) -> Any:
    kw.setdefault("model", SONNET)
    kw.setdefault("max_tokens", 1024)
    kw.setdefault("messages", [{"role": "user", "content": "What's the weather in Paris?"}])
    if not stream:
        return (await client.messages.create(**kw)).usage
    events = await client.messages.create(**kw, stream=True)
    found: list[Any] = []
    async for event in events:
        if event.type == "message_start":
            found.append(event.message.usage)
        elif event.type == "message_delta":
            found.append(event.usage)
    start, end = found
    assert (start.cache_read_input_tokens, start.cache_creation_input_tokens) == (
        end.cache_read_input_tokens,
        end.cache_creation_input_tokens,
    )
    return start


# --- the Claude API ------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_marked_prefix_is_written_then_read(
    anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    first = await usage(anthropic_client, stream, system=system())
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 1024
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    second = await usage(anthropic_client, stream, system=system())
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == first.input_tokens  # the rest, after the breakpoint


async def test_nothing_is_cached_without_a_breakpoint_or_under_the_minimum(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    for _ in range(2):
        plain = await usage(anthropic_client, system=SYSTEM)
        assert plain.cache_read_input_tokens == plain.cache_creation_input_tokens == 0
    short = system(text="Be brief. " * 300)  # about 750 tokens
    for _ in range(2):
        assert (await usage(anthropic_client, system=short)).cache_read_input_tokens == 0
    # Haiku 4.5 caches from 4,096 tokens, Opus 5 from 512
    for model, cached in (("claude-haiku-4-5", False), ("claude-opus-5", True)):
        for _ in range(2):
            found = await usage(anthropic_client, model=model, system=system())
        assert (found.cache_read_input_tokens > 0) is cached


async def test_each_lifetime_is_counted_and_kept_as_long_as_asked(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    clock = clocked(emu, "anthropic")
    messages = [{"role": "user", "content": [{"type": "text", "text": "Paris?" * 200}]}]
    messages[0]["content"][0]["cache_control"] = MARK  # type: ignore[index]
    written = await usage(anthropic_client, system=system("1h"), messages=messages)
    creation = written.cache_creation
    assert creation.ephemeral_1h_input_tokens > 0 and creation.ephemeral_5m_input_tokens > 0
    clock.now = 301  # the 5 minutes of the messages are over, the system's hour is not
    later = await usage(anthropic_client, system=system("1h"), messages=messages)
    assert later.cache_read_input_tokens == creation.ephemeral_1h_input_tokens
    clock.now = 301 + 3601
    assert (await usage(anthropic_client, system=SYSTEM)).cache_read_input_tokens == 0


async def test_a_read_looks_back_twenty_blocks_from_a_breakpoint(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    def conversation(blocks: int) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = [
            {"type": "text", "text": f"Note {i}: " + "cloudy " * 20} for i in range(blocks)
        ]
        content[-1] = {**content[-1], "cache_control": MARK}
        return [{"role": "user", "content": content}]

    first = await usage(anthropic_client, system=SYSTEM, messages=conversation(10))
    near = await usage(anthropic_client, system=SYSTEM, messages=conversation(29))
    assert near.cache_read_input_tokens == first.cache_creation_input_tokens  # 19 blocks back
    far = await usage(anthropic_client, system=SYSTEM, messages=conversation(60))
    assert far.cache_read_input_tokens == 0  # the last prefix it wrote is 31 blocks back


async def test_another_thinking_configuration_reads_only_tools_and_system(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Paris?", "cache_control": MARK}]}
    ]
    kw: dict[str, Any] = {"system": system(), "messages": messages, "max_tokens": 4096}
    first = await usage(anthropic_client, thinking={"type": "adaptive"}, **kw)
    same = await usage(anthropic_client, thinking={"type": "adaptive"}, **kw)
    assert same.cache_read_input_tokens == first.cache_creation_input_tokens
    other = await usage(anthropic_client, thinking={"type": "enabled", "budget_tokens": 2048}, **kw)
    assert 0 < other.cache_read_input_tokens < same.cache_read_input_tokens


async def test_a_top_level_breakpoint_marks_the_last_block(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    first = await usage(anthropic_client, system=SYSTEM, cache_control=MARK)
    second = await usage(anthropic_client, system=SYSTEM, cache_control=MARK)
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens > 0


async def refusal(client: anthropic.AsyncAnthropic, **kw: Any) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        await usage(client, **kw)
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error"
    return error["message"]


async def test_a_breakpoint_on_a_thinking_block_is_refused(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    kw: dict[str, Any] = {
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "max_tokens": 4096,
        "tools": [TOOL],
    }
    reply = await anthropic_client.messages.create(
        model=SONNET, messages=[{"role": "user", "content": "Weather in Paris?"}], **kw
    )
    content = [b.model_dump(exclude_none=True) for b in reply.content]
    use = next(b for b in content if b["type"] == "tool_use")
    for kind in ("thinking", "redacted_thinking"):
        block = (
            content[0]
            if kind == "thinking"
            else {"type": "redacted_thinking", "data": content[0]["signature"]}
        )
        messages = [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [{**block, "cache_control": MARK}, use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"]}]},
        ]
        text = await refusal(anthropic_client, messages=messages, **kw)
        assert text.endswith(
            f"messages.1.content.0.{kind}.cache_control: Extra inputs are not permitted"
        )


async def test_more_than_four_breakpoints_are_refused(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    text = await refusal(anthropic_client, system=system() * 4, cache_control=MARK)
    assert text.endswith("A maximum of 4 blocks with cache_control may be provided. Found 5.")


async def test_an_hour_after_five_minutes_is_refused(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    tools = [{**TOOL, "cache_control": MARK}]
    text = await refusal(anthropic_client, tools=tools, system=system("1h"))
    assert text.endswith(
        "system.0.cache_control.ttl: a ttl='1h' cache_control block must not come after a "
        "ttl='5m' cache_control block. Note that blocks are processed in the following order: "
        "`tools`, `system`, `messages`."
    )
    assert await usage(
        anthropic_client, tools=[{**TOOL, "cache_control": dict(MARK, ttl="1h")}], system=system()
    )


# --- Bedrock ---------------------------------------------------------------------------------


def converse(client: Any, stream: bool = False, **kw: Any) -> dict[str, Any]:
    kw.setdefault("modelId", BEDROCK_SONNET)
    kw.setdefault("messages", [{"role": "user", "content": [{"text": "Weather in Paris?"}]}])
    kw.setdefault("inferenceConfig", {"maxTokens": 1024})
    if not stream:
        return client.converse(**kw)["usage"]
    events = client.converse_stream(**kw)["stream"]
    return next(e["metadata"]["usage"] for e in events if "metadata" in e)


POINT = {"cachePoint": {"type": "default"}}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "eventstream"])
def test_a_cache_point_is_written_then_read(bedrock_client: Any, stream: bool) -> None:
    first = converse(bedrock_client, stream, system=[{"text": SYSTEM}, POINT])
    assert first["cacheReadInputTokens"] == 0 and first["cacheWriteInputTokens"] > 1024
    assert first["cacheDetails"] == [{"ttl": "5m", "inputTokens": first["cacheWriteInputTokens"]}]
    second = converse(bedrock_client, stream, system=[{"text": SYSTEM}, POINT])
    assert second["cacheReadInputTokens"] == first["cacheWriteInputTokens"]
    assert second["cacheWriteInputTokens"] == 0 and second["inputTokens"] == first["inputTokens"]
    assert (first["cacheDetails"], "cacheDetails" in second) == (first["cacheDetails"], False)


def test_cache_points_in_tools_and_messages_with_their_lifetime(bedrock_client: Any) -> None:
    hour = {"cachePoint": {"type": "default", "ttl": "1h"}}
    spec = {
        "toolSpec": {
            "name": "get_weather",
            "description": SYSTEM,
            "inputSchema": {"json": TOOL["input_schema"]},
        }
    }
    tools = {"tools": [spec, hour]}
    messages = [{"role": "user", "content": [{"text": SYSTEM}, POINT]}]
    first = converse(bedrock_client, toolConfig=tools, messages=messages)
    assert [d["ttl"] for d in first["cacheDetails"]] == ["1h", "5m"]
    second = converse(bedrock_client, toolConfig=tools, messages=messages)
    assert second["cacheReadInputTokens"] == first["cacheWriteInputTokens"]


def test_a_cache_point_after_reasoning_is_refused(bedrock_client: Any) -> None:
    config = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    kw: dict[str, Any] = {
        "additionalModelRequestFields": config,
        "inferenceConfig": {"maxTokens": 4096},
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "get_weather", "inputSchema": {"json": TOOL["input_schema"]}}}
            ]
        },
    }
    question = {"role": "user", "content": [{"text": "Weather in Paris?"}]}
    reply = bedrock_client.converse(modelId=BEDROCK_SONNET, messages=[question], **kw)
    content = reply["output"]["message"]["content"]
    use = next(b["toolUse"] for b in content if "toolUse" in b)
    assistant = {"role": "assistant", "content": [content[0], POINT, *content[1:]]}
    result = {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": "sunny"}]}}
    messages = [question, assistant, {"role": "user", "content": [result]}]
    with pytest.raises(ClientError) as caught:
        converse(bedrock_client, messages=messages, **kw)
    error = caught.value.response["Error"]
    assert error["Code"] == "ValidationException"
    assert error["Message"] == (
        "The model returned the following errors: "
        "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted"
    )


@pytest.mark.parametrize("model", ["deepseek.r1-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"])
def test_a_cache_point_to_a_model_without_caching_is_refused(
    bedrock_client: Any, model: str
) -> None:
    with pytest.raises(ClientError) as caught:
        converse(bedrock_client, modelId=model, system=[{"text": SYSTEM}, POINT])
    assert caught.value.response["Error"]["Message"] == (
        "You invoked an unsupported model or your request did not allow prompt caching. See "
        "the documentation for more information."
    )


def test_each_platform_and_account_has_its_own_cache(emu: Emulator, bedrock_client: Any) -> None:
    converse(bedrock_client, system=[{"text": SYSTEM}, POINT])
    other = emu.bedrock_client(aws_access_key_id="AKIAOTHERACCOUNT")
    assert converse(other, system=[{"text": SYSTEM}, POINT])["cacheReadInputTokens"] == 0
    emu.reset()
    assert converse(bedrock_client, system=[{"text": SYSTEM}, POINT])["cacheReadInputTokens"] == 0


@pytest.mark.parametrize(("model", "keeps"), [(SONNET, True), ("claude-sonnet-4-5", False)])
async def test_thinking_the_model_drops_is_not_in_the_prefix(
    anthropic_client: anthropic.AsyncAnthropic, model: str, keeps: bool
) -> None:
    """Claude 4.5 and earlier drop the thinking of earlier turns: after a new user turn, the
    prefix cached during the tool loop (with that thinking) no longer matches past it."""
    kw: dict[str, Any] = {
        "model": model,
        "system": SYSTEM,
        "tools": [TOOL],
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }

    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": MARK}]}

    question = user("Weather in Paris?")
    opening = await anthropic_client.messages.create(messages=[question], **kw)
    first = [b.model_dump(exclude_none=True) for b in opening.content]
    use = next(b for b in first if b["type"] == "tool_use")
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": "sunny"}
    loop = [question, {"role": "assistant", "content": first}]
    loop.append({"role": "user", "content": [{**result, "cache_control": MARK}]})
    answer = await anthropic_client.messages.create(messages=loop, **kw)
    written = answer.usage
    text = [b.model_dump(exclude_none=True) for b in answer.content if b.type == "text"]
    later = [*loop, {"role": "assistant", "content": text}, user("And in Rome?")]
    read = (await anthropic_client.messages.create(messages=later, **kw)).usage
    everything = written.cache_read_input_tokens + written.cache_creation_input_tokens
    if keeps:
        assert read.cache_read_input_tokens == everything
    else:
        assert 0 < read.cache_read_input_tokens == opening.usage.cache_creation_input_tokens
