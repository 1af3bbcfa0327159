"""The Gemini API and Vertex AI wires on images, documents, function responses with media,
JSON responses and malformed parts, through the official SDK (raw requests for what it never
sends): what the services take, and their refusals with the real status and message."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from tests.support.gemini import api_fixture, client_fixture  # noqa: F401 (fixtures)
from thinkagent.emulator import Emulator
from thinkagent.emulator.framework import WireError
from thinkagent.emulator.gemini.rules import GEMINI_API, VERTEX_AI, gemini_profile, parse_request
from thinkagent.emulator.signing import Signer

from .test_gemini import G3, TOOLS, client_error, raw_post, user

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
PDF = b"%PDF-1.4\n" + b"page " * 40 + b"%%EOF\n"
VERTEX_DOCS = "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"


def blob(data: bytes, mime_type: str) -> types.Part:
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


def unsupported(api: str, mime_type: str) -> str:
    if api == "vertex":
        return (
            f"Unable to submit request because it has a mimeType parameter with value "
            f"{mime_type}, which is not supported. Update the mimeType and try again. "
            f"Learn more: {VERTEX_DOCS}"
        )
    return f"Unsupported MIME type: {mime_type}"


# --- images and documents in a prompt -------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_images_and_documents_are_seen_with_their_sizes(
    client: genai.Client, stream: bool
) -> None:
    uri = "gs://bucket/report.pdf"
    parts = [
        types.Part(text="What is in these?"),
        blob(PNG, "image/png"),
        blob(PDF, "application/pdf"),
        types.Part(file_data=types.FileData(file_uri=uri, mime_type="application/pdf")),
    ]
    contents = [types.Content(role="user", parts=parts)]
    if stream:
        chunks = await client.aio.models.generate_content_stream(model=G3, contents=contents)
        text = "".join([c.text or "" async for c in chunks])
    else:
        text = (await client.aio.models.generate_content(model=G3, contents=contents)).text or ""
    assert text.startswith(
        f"I see 3 attachments: an image (image/png, {len(PNG)} bytes), a document "
        f"(application/pdf, {len(PDF)} bytes) and a document (application/pdf, at {uri})."
    )


async def test_a_media_type_the_model_does_not_take_is_refused(
    client: genai.Client, api: str
) -> None:
    for mime_type in ("application/zip", "image/gif"):
        with pytest.raises(errors.ClientError) as exc:
            await client.aio.models.generate_content(
                model=G3, contents=[types.Content(role="user", parts=[blob(b"x", mime_type)])]
            )
        assert client_error(exc) == unsupported(api, mime_type)


async def test_audio_and_video_are_taken_as_documents(client: genai.Client) -> None:
    parts = [blob(b"ID3", "audio/mpeg"), blob(b"\0\0\0 ftyp", "video/mp4")]
    reply = await client.aio.models.generate_content(
        model=G3, contents=[types.Content(role="user", parts=parts)]
    )
    text = reply.text or ""
    assert "a document (audio/mpeg, 3 bytes)" in text and "a document (video/mp4, 8 bytes)" in text


async def test_text_documents_differ_by_platform(
    gemini_client: genai.Client, vertex_client: genai.Client
) -> None:
    contents = [types.Content(role="user", parts=[blob(b"# notes", "text/markdown")])]
    reply = await gemini_client.aio.models.generate_content(model=G3, contents=contents)
    assert "a document (text/markdown, 7 bytes)" in (reply.text or "")
    with pytest.raises(errors.ClientError) as exc:
        await vertex_client.aio.models.generate_content(model=G3, contents=contents)
    assert client_error(exc) == unsupported("vertex", "text/markdown")


async def test_vertex_refuses_an_inline_image_over_7_mb(vertex_client: genai.Client) -> None:
    size = 7 * 1024 * 1024 + 1
    contents = [types.Content(role="user", parts=[blob(b"\0" * size, "image/png")])]
    with pytest.raises(errors.ClientError) as exc:
        await vertex_client.aio.models.generate_content(model=G3, contents=contents)
    assert client_error(exc) == (
        f"The file size of `contents[0].parts[0].inline_data` is {size}, which exceeds max "
        "allowed file size of 7340032 for `image/png` files. Reduce the file size by lowering "
        "the image resolution, splitting the PDF into multiple files, and so on."
    )


def test_the_gemini_api_bounds_documents_and_the_request_payload() -> None:
    """The Gemini API's limits (50 MB PDFs, 100 MB of inline base64 per request), checked on
    the rules with smaller ones so the test stays light."""
    assert (GEMINI_API.document_bytes, GEMINI_API.payload_bytes) == (50 << 20, 100 << 20)
    assert (VERTEX_AI.image_bytes, VERTEX_AI.document_bytes) == (7 << 20, 50 << 20)
    small = dataclasses.replace(GEMINI_API, document_bytes=100, payload_bytes=450)
    model = gemini_profile(G3)
    assert model is not None

    def parse(*parts: tuple[bytes, str]) -> str:
        inline = [
            {"inlineData": {"mimeType": m, "data": base64.b64encode(d).decode()}} for d, m in parts
        ]
        body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}, *inline]}]}
        try:
            parse_request(body, model, platform=small, signer=Signer("secret"))
        except WireError as exc:
            return str(exc.message)
        return "accepted"

    assert parse((b"%" * 100, "application/pdf"), (b"\0" * 200, "image/png")) == "accepted"
    assert "exceeds max allowed file size of 100 for `application/pdf`" in parse(
        (b"%" * 101, "application/pdf")
    )
    assert parse((b"\0" * 200, "image/png"), (b"\0" * 150, "image/png")) == (
        "Request payload size exceeds the limit: 450 bytes."
    )


def test_inline_data_must_be_base64(emu: Emulator, api: str) -> None:
    part = {"inlineData": {"mimeType": "image/png", "data": "not base64!"}}
    status, body = raw_post(emu, api, {"contents": [{"role": "user", "parts": [part]}]})
    assert status == 400
    assert body["error"]["message"] == (
        "Invalid value at 'contents[0].parts[0].inline_data.data' (TYPE_BYTES), Base64 decoding "
        'failed for "not base64!"'
    )


# --- media in function responses -------------------------------------------------------------


async def call_turn(client: genai.Client, model: str = G3) -> tuple[types.Content, str]:
    """A question and the model turn that calls get_weather: (that turn, the call's name)."""
    config = types.GenerateContentConfig(
        tools=TOOLS,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    reply = await client.aio.models.generate_content(
        model=model, contents=[user("What's the weather in Paris?")], config=config
    )
    content = reply.candidates[0].content  # type: ignore[index]
    assert content is not None and content.parts is not None
    names = [p.function_call.name for p in content.parts if p.function_call]
    assert len(names) == 1 and names[0]
    return content, names[0]


def response_with(name: str, *media: types.FunctionResponsePart, **response: Any) -> types.Content:
    part = types.Part(
        function_response=types.FunctionResponse(
            name=name, response=response or {"output": "see the map"}, parts=list(media) or None
        )
    )
    return types.Content(role="user", parts=[part])


def png_result(name: str | None = None) -> types.FunctionResponsePart:
    return types.FunctionResponsePart(
        inline_data=types.FunctionResponseBlob(data=PNG, mime_type="image/png", display_name=name)
    )


async def test_gemini_3_sees_the_media_of_a_function_response(client: genai.Client) -> None:
    turn, name = await call_turn(client)
    contents = [user("What's the weather in Paris?"), turn, response_with(name, png_result())]
    reply = await client.aio.models.generate_content(
        model=G3, contents=contents, config=types.GenerateContentConfig(tools=TOOLS)
    )
    assert f"an image (image/png, {len(PNG)} bytes)" in (reply.text or "")


async def test_gemini_2_5_refuses_media_in_a_function_response(
    client: genai.Client, api: str
) -> None:
    turn, name = await call_turn(client, "gemini-2.5-flash")
    contents = [user("What's the weather in Paris?"), turn, response_with(name, png_result())]
    with pytest.raises(errors.ClientError) as exc:
        await client.aio.models.generate_content(
            model="gemini-2.5-flash",
            contents=contents,
            config=types.GenerateContentConfig(tools=TOOLS),
        )
    message = "`function_response.parts` is not supported for this model."
    if api == "vertex":
        message = (
            f"Unable to submit request because {message} Learn more: "
            "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"
        )
    assert client_error(exc) == message


async def test_file_data_in_a_function_response_is_vertex_only(
    client: genai.Client, api: str
) -> None:
    turn, name = await call_turn(client)
    uri = types.FunctionResponseFileData(file_uri="gs://bucket/map.png", mime_type="image/png")
    media = types.FunctionResponsePart(file_data=uri)
    contents = [user("What's the weather in Paris?"), turn, response_with(name, media)]
    config = types.GenerateContentConfig(tools=TOOLS)
    if api == "vertex":
        reply = await client.aio.models.generate_content(model=G3, contents=contents, config=config)
        assert "an image (image/png, at gs://bucket/map.png)" in (reply.text or "")
        return
    with pytest.raises(errors.ClientError) as exc:
        await client.aio.models.generate_content(model=G3, contents=contents, config=config)
    assert client_error(exc) == (
        'Invalid JSON payload received. Unknown name "fileData" at '
        "'contents[2].parts[0].function_response.parts[0]': Cannot find field."
    )


async def test_a_reference_must_name_a_part_of_the_response(client: genai.Client) -> None:
    turn, name = await call_turn(client)
    config = types.GenerateContentConfig(tools=TOOLS)
    named = response_with(name, png_result("map.png"), image={"$ref": "map.png"})
    contents = [user("What's the weather in Paris?"), turn, named]
    await client.aio.models.generate_content(model=G3, contents=contents, config=config)
    wrong = response_with(name, png_result("map.png"), image={"$ref": "chart.png"})
    with pytest.raises(errors.ClientError) as exc:
        await client.aio.models.generate_content(
            model=G3, contents=[*contents[:2], wrong], config=config
        )
    assert client_error(exc) == (
        "The referenced name `chart.png` in function_response.response does not match to a "
        "display_name in the function_response.parts."
    )


# --- JSON responses -------------------------------------------------------------------------


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temperature_c": {"type": "number"}},
    "required": ["city", "temperature_c"],
}


@pytest.mark.parametrize(
    "schema",
    [
        {"response_json_schema": SCHEMA},
        {"response_schema": {**SCHEMA, "type": "OBJECT"}},
        {},
    ],
    ids=["json-schema", "openapi-schema", "json-mode"],
)
async def test_a_json_response_follows_its_schema(
    client: genai.Client, schema: dict[str, Any]
) -> None:
    config = types.GenerateContentConfig(response_mime_type="application/json", **schema)
    reply = await client.aio.models.generate_content(
        model=G3, contents="The weather in Paris?", config=config
    )
    value = json.loads(reply.text or "")
    assert isinstance(value, dict)
    if schema:
        assert set(value) == {"city", "temperature_c"}
        assert reply.parsed is not None  # the SDK's own reading of it


async def test_gemini_3_calls_tools_then_answers_in_json(client: genai.Client) -> None:
    config = types.GenerateContentConfig(
        tools=TOOLS,
        response_mime_type="application/json",
        response_json_schema=SCHEMA,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    turn, name = await call_turn(client)
    result = response_with(name, output="sunny, 21 C")
    reply = await client.aio.models.generate_content(
        model=G3, contents=[user("What's the weather in Paris?"), turn, result], config=config
    )
    assert reply.parsed == {"city": "Paris", "temperature_c": 21}


async def test_gemini_2_5_refuses_json_with_function_calling(client: genai.Client) -> None:
    config = types.GenerateContentConfig(tools=TOOLS, response_mime_type="application/json")
    with pytest.raises(errors.ClientError) as exc:
        await client.aio.models.generate_content(
            model="gemini-2.5-flash", contents="Paris?", config=config
        )
    assert client_error(exc) == (
        "Function calling with a response mime type: 'application/json' is unsupported"
    )


def test_json_response_errors(emu: Emulator, api: str) -> None:
    question = [{"role": "user", "parts": [{"text": "Paris?"}]}]
    config = {"responseMimeType": "application/json", "responseSchema": {"$schema": "x"}}
    status, body = raw_post(emu, api, {"contents": question, "generationConfig": config})
    assert (status, body["error"]["message"]) == (
        400,
        'Invalid JSON payload received. Unknown name "$schema" at '
        "'generation_config.response_schema': Cannot find field.",
    )
    config = {"responseMimeType": "application/pdf"}
    status, body = raw_post(emu, api, {"contents": question, "generationConfig": config})
    assert status == 400
    if api == "vertex":
        assert body["error"]["message"] == unsupported("vertex", "application/pdf")
    else:
        assert body["error"]["message"].endswith(
            "allowed mimetypes are `text/plain`, `application/json`, `application/xml`, "
            "`application/yaml` and `text/x.enum`."
        )


# --- parts read as the service reads them (issue 10, defect 8) ---------------------------------


@pytest.mark.parametrize(
    ("part", "message"),
    [
        (
            {"text": "42", "thoughtSignature": "%%% not base64"},
            "Invalid value at 'contents[0].parts[0].thought_signature' (TYPE_BYTES), Base64 "
            'decoding failed for "%%% not base64"',
        ),
        ({"text": 42}, "Invalid value at 'contents[0].parts[0].text' (TYPE_STRING), 42"),
        (
            {"text": "hi", "thought": "yes"},
            "Invalid value at 'contents[0].parts[0].thought' (TYPE_BOOL), \"yes\"",
        ),
    ],
    ids=["signature-not-base64", "text-a-number", "thought-not-a-bool"],
)
def test_a_malformed_user_part_is_refused(
    emu: Emulator, api: str, part: dict[str, Any], message: str
) -> None:
    status, body = raw_post(emu, api, {"contents": [{"role": "user", "parts": [part]}]})
    assert (status, body["error"]["message"], body["error"]["status"]) == (
        400,
        message,
        "INVALID_ARGUMENT",
    )


def test_a_base64_signature_on_a_user_part_is_accepted(emu: Emulator, api: str) -> None:
    part = {"text": "42", "thoughtSignature": base64.b64encode(b"anything").decode()}
    status, _ = raw_post(emu, api, {"contents": [{"role": "user", "parts": [part]}]})
    assert status == 200
