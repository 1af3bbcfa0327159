"""Images and documents: in prompts, returned by tools, kept and persisted byte for byte, and
checked against what the model declares before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from thinkagent import (
    Agent,
    ConfigurationError,
    Document,
    HistoryError,
    Image,
    MediaSupport,
    Message,
    ModelProfile,
    TextPart,
    ToolCall,
    ToolResult,
    WarningEvent,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.testing import ScriptedModel

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(255, -1, -1))


def answer(text: str = "A cat.") -> Message:
    return Message(role="assistant", parts=(TextPart(text=text),))


async def test_a_prompt_with_an_image_and_a_document_is_sent_and_kept() -> None:
    image = Image(data=PNG, media_type="image/png")
    document = Document(url="https://example.com/report.pdf", name="report")
    model = ScriptedModel([answer()])
    result = await Agent(model).run(["What is this?", image, "And this?", document])
    prompt = result.messages[0]
    assert prompt.parts == (
        TextPart(text="What is this?"),
        image,
        TextPart(text="And this?"),
        document,
    )
    assert prompt.media == [image, document]
    assert model.requests[0].messages[0] == prompt


def test_media_round_trips_through_json_byte_for_byte() -> None:
    messages = [
        Message.user(["see", Image(data=PNG, media_type="image/png")]),
        Message(
            role="assistant",
            parts=(ToolCall(id="c", name="scan", arguments={}),),
        ),
        Message(
            role="user",
            parts=(
                ToolResult(
                    call_id="c",
                    name="scan",
                    content="scanned",
                    media=(Document(data=PDF, media_type="application/pdf", name="scan.pdf"),),
                ),
            ),
        ),
    ]
    saved = dump_messages(messages)
    assert '"data":"iVBORw0KGgo' in saved  # standard base64 in the JSON
    loaded = load_messages(saved)
    assert loaded == messages
    assert dump_messages(loaded) == saved
    assert loaded[0].parts[1].data == PNG  # type: ignore[union-attr]
    assert loaded[2].tool_results[0].media[0].data == PDF
    text_only = dump_messages([Message.user("hi")])
    assert "media" not in text_only  # the format is additive


def test_media_parts_are_validated() -> None:
    with pytest.raises(ValidationError, match="exactly one of data"):
        Image(media_type="image/png")
    with pytest.raises(ValidationError, match="exactly one of data"):
        Image(data=PNG, url="https://x", media_type="image/png")
    with pytest.raises(ValidationError, match="need their media_type"):
        Document(data=PDF)
    with pytest.raises(ValidationError, match="image/\\* media type"):
        Image(data=PNG, media_type="application/pdf")
    with pytest.raises(HistoryError, match="not standard base64"):
        load_messages(
            '[{"role":"user","parts":[{"kind":"image","data":"*","media_type":"image/png"}]}]'
        )


def test_media_only_on_user_messages() -> None:
    image = Image(url="https://example.com/a.png")
    bad = [Message.user("q"), Message.model_construct(role="assistant", parts=(image,))]
    with pytest.raises(HistoryError, match=r"messages\[1\]\.parts\[0\]: an image on an assistant"):
        validate_history(bad)


def test_from_file_guesses_the_media_type(tmp_path: Path) -> None:
    path = tmp_path / "chart.png"
    path.write_bytes(PNG)
    assert Image.from_file(path) == Image(data=PNG, media_type="image/png")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(PDF)
    assert Document.from_file(pdf).name == "paper.pdf"
    with pytest.raises(ValueError, match="media type"):
        Document.from_file(tmp_path / "unknown.zzz-none")


async def test_a_tool_returning_media_fills_the_results_media() -> None:
    def snapshot() -> list[object]:
        return ["the chart", Image(data=PNG, media_type="image/png")]

    def only_image() -> Image:
        return Image(data=PNG, media_type="image/png")

    model = ScriptedModel(
        [
            Message(
                role="assistant",
                parts=(
                    ToolCall(id="a", name="snapshot", arguments={}),
                    ToolCall(id="b", name="only_image", arguments={}),
                ),
            ),
            answer(),
        ]
    )
    result = await Agent(model, tools=[snapshot, only_image]).run("q")
    first, second = result.messages[2].tool_results
    assert first.content == "the chart" and first.media == (
        Image(data=PNG, media_type="image/png"),
    )
    assert second.content is None and second.media[0].data == PNG


async def test_media_a_model_cannot_take_is_refused_before_sending() -> None:
    text_only = ScriptedModel([answer()], profile=ModelProfile())
    with pytest.raises(
        ConfigurationError, match=r"messages\[0\]\.parts\[1\]: this model takes no images"
    ):
        await Agent(text_only).run(["look", Image(data=PNG, media_type="image/png")])
    assert text_only.requests == []

    pngs_by_bytes = ModelProfile(media=MediaSupport(frozenset({"image/png"}), max_bytes=100))
    model = ScriptedModel([answer()], profile=pngs_by_bytes)
    with pytest.raises(ConfigurationError, match="no image by URL"):
        await Agent(model).run(["look", Image(url="https://example.com/a.png")])
    with pytest.raises(ConfigurationError, match="of type 'image/jpeg'"):
        await Agent(model).run(["look", Image(data=b"x", media_type="image/jpeg")])
    with pytest.raises(ConfigurationError, match="has 272 bytes, over this model's limit of 100"):
        await Agent(model).run(["look", Image(data=PNG, media_type="image/png")])
    assert model.requests == []


async def test_media_in_tool_results_kills_the_run_after_the_tool_ran() -> None:
    """Defect 1 (issue 25): a model that takes images, but none in tool results (OpenAI Chat,
    Gemini 2.5), gets a tool's image in a user part right after the results, with a warning;
    the evidence keeps the image in the result, as the tool returned it."""

    def shot() -> Image:
        return Image(data=PNG, media_type="image/png")

    profile = ModelProfile(media=MediaSupport(frozenset({"image/*"})))
    model = ScriptedModel(
        [Message(role="assistant", parts=(ToolCall(id="a", name="shot", arguments={}),)), answer()],
        profile=profile,
    )
    result = await Agent(model, tools=[shot]).run("q")
    assert result.output == "A cat."
    kept = result.messages[2].tool_results[0]
    assert kept.media == (Image(data=PNG, media_type="image/png"),)  # the evidence, verbatim
    sent = model.requests[1].messages[2]
    result_part, image = sent.parts
    assert isinstance(result_part, ToolResult) and result_part.media == ()
    assert result_part.content == "[1 image(s) or document(s) follow the tool results]"
    assert image == Image(data=PNG, media_type="image/png")
    assert [w.code for w in result.warnings] == ["media_moved"]
    validate_history(model.requests[1].messages)


async def test_moved_media_is_streamed_with_its_warning_and_sent_on_every_later_request() -> None:
    def shot() -> list[object]:
        return ["a chart", Image(data=PNG, media_type="image/png")]

    profile = ModelProfile(media=MediaSupport(frozenset({"image/png"})))
    call = Message(role="assistant", parts=(ToolCall(id="a", name="shot", arguments={}),))
    model = ScriptedModel(
        [
            call,
            call.model_copy(update={"parts": (ToolCall(id="b", name="shot", arguments={}),)}),
            answer(),
        ],
        profile=profile,
    )
    async with Agent(model, tools=[shot]).run_stream("q") as stream:
        warnings = [e.code async for e in stream if isinstance(e, WarningEvent)]
    assert warnings == ["media_moved"]  # once per run
    last = model.requests[2].messages
    assert [type(p).__name__ for p in last[2].parts] == ["ToolResult", "Image"]
    assert [type(p).__name__ for p in last[4].parts] == ["ToolResult", "Image"]
    assert last[2].tool_results[0].content == (
        "a chart\n[1 image(s) or document(s) follow the tool results]"
    )
    assert stream.result.messages[2].tool_results[0].media[0].data == PNG


async def test_a_tool_returning_media_is_refused_before_it_runs_where_no_shape_exists() -> None:
    ran: list[str] = []

    def shot() -> Image:
        ran.append("shot")
        return Image(data=PNG, media_type="image/png")

    model = ScriptedModel(
        [Message(role="assistant", parts=(ToolCall(id="a", name="shot", arguments={}),))],
        profile=ModelProfile(),  # no media at all
    )
    with pytest.raises(ConfigurationError, match="tool 'shot' returns images or documents"):
        await Agent(model, tools=[shot]).run("q")
    assert ran == [] and model.requests == []


async def test_media_the_model_takes_nowhere_still_stops_the_run_with_its_evidence() -> None:
    def shot():  # no annotation: its media is only known once it returned
        return Image(data=PNG, media_type="image/png")

    profile = ModelProfile(media=MediaSupport(frozenset({"application/pdf"})))
    model = ScriptedModel(
        [Message(role="assistant", parts=(ToolCall(id="a", name="shot", arguments={}),)), answer()],
        profile=profile,
    )
    with pytest.raises(ConfigurationError, match="no image of type 'image/png'") as info:
        await Agent(model, tools=[shot]).run("q")
    assert len(model.requests) == 1  # refused before the second request
    validate_history(info.value.messages)


@pytest.mark.parametrize("prompt", [[], ["  "], [" ", "\n"]])
async def test_an_empty_sequence_prompt_is_refused(prompt: list[str]) -> None:
    model = ScriptedModel([answer()])
    with pytest.raises(HistoryError, match="the prompt is empty"):
        await Agent(model).run(prompt)


async def test_a_prompt_of_something_else_is_refused() -> None:
    with pytest.raises(HistoryError, match="a prompt holds text, Image and Document, not int"):
        await Agent(ScriptedModel([answer()])).run(["q", 3])  # type: ignore[list-item]
