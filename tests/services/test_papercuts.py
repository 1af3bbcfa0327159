"""What a newcomer meets in the first hour: an adapter imported without its SDK names the extra
to install, the standalone emulator serves code that only knows the SDKs' own environment
variables, and the Gemini demo says why it is skipped on Python 3.10."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"
QUICK_START = '''
import asyncio
from thinkagent import Agent
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


async def main() -> None:
    model = AnthropicModel("claude-opus-4-7", thinking=ClaudeThinking.adaptive(display="summarized"))
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    print(result.output)


asyncio.run(main())
'''


@pytest.mark.parametrize(
    ("missing", "statement", "message"),
    [
        (
            "anthropic",
            "import thinkagent.providers.anthropic",
            "AnthropicModel needs the 'anthropic' package: pip install 'thinkagent[anthropic]'",
        ),
        (
            "anthropic",
            "from thinkagent.providers.claude import AnthropicModel",
            "pip install 'thinkagent[anthropic]'",
        ),
        (
            "botocore",
            "import thinkagent.providers.bedrock",
            "BedrockModel needs the 'botocore' package: pip install 'thinkagent[bedrock]'",
        ),
        (
            "openai",
            "from thinkagent.providers.openai import OpenAIChatModel",
            "needs the 'openai' package: pip install 'thinkagent[openai]'",
        ),
        (
            "openai",
            "import thinkagent.providers.openai_responses",
            "pip install 'thinkagent[openai]'",
        ),
        (
            "google",
            "import thinkagent.providers.gemini",
            "GeminiModel needs the 'google-genai' package: pip install 'thinkagent[gemini]'",
        ),
        (
            "starlette",
            "import thinkagent.emulator",
            "thinkagent.emulator needs the 'starlette' package: pip install 'thinkagent[emulator]'",
        ),
        ("opentelemetry", "import thinkagent.otel", "pip install 'thinkagent[otel]'"),
        ("sse_starlette", "import thinkagent.sse", "pip install 'thinkagent[sse]'"),
    ],
)
def test_an_import_without_its_extra_names_the_extra(
    missing: str, statement: str, message: str
) -> None:
    # `sys.modules[name] = None` makes importing `name` fail as if it were not installed
    probe = f"import sys; sys.modules[{missing!r}] = None\n{statement}"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: ") and message in last
    assert "During handling" not in done.stderr and "direct cause" not in done.stderr


def test_the_standalone_emulator_serves_code_that_knows_only_the_sdk_variables(
    tmp_path: Path,
) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "thinkagent.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = re.search(r"http://[\d.]+:\d+", server.stdout.readline())
        assert url is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_"))}
        env.update(ANTHROPIC_BASE_URL=url.group(0), ANTHROPIC_API_KEY="any-key")
        script = tmp_path / "quick_start.py"
        script.write_text(QUICK_START, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    assert "sunny in Paris, 21 C" in done.stdout


def test_the_gemini_demo_is_skipped_with_a_reason_on_python_3_10() -> None:
    probe = (
        "import runpy, sys\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        "import _demo  # its imports need the real version; the script's check sees 3.10\n"
        "sys.version_info = (3, 10, 14, 'final', 0)\n"
        f"runpy.run_path({str(EXAMPLES / 'gemini_thinking.py')!r}, run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "Skipping the Gemini demo: it needs google-genai 3, which installs on Python 3.11"
    )
