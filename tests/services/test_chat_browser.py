"""examples/fastapi_chat in a real headless browser: Debian's Chromium, driven over WebDriver
(its chromedriver), types a question and sees the thinking stream in (growing from one
screenshot to the next, on the emulator the app paces), stay readable once it ends, the tool
call with its result, the answer and the turn's usage; the page says it runs on the emulator
and with which model; a reload shows the stored conversation.

Skipped, saying why, where Chromium or its driver is not installed (`.ci/run` installs them
with `apt-get install chromium chromium-driver` where it can)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_fastapi_chat import KEYS, serve, stop

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no headless browser: install Debian's chromium and chromium-driver "
    "(apt-get install -y chromium chromium-driver) to run the chat page in one",
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
)


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # no key: the app starts the emulator itself, as `make chat` does on a fresh machine
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.endswith("_BASE_URL")}
    process, url = serve(env, tmp_path_factory.mktemp("browser") / "conversations.sqlite3")
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_page_shows_the_thinking_then_the_answer(
    page_url: str, browser: object, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    driver.get(page_url)
    wait = WebDriverWait(driver, 30)
    question = wait.until(shown.element_to_be_clickable((By.ID, "question")))
    question.send_keys("What's the weather in Paris?", Keys.ENTER)

    thinking = wait.until(
        shown.visibility_of_element_located((By.CSS_SELECTOR, "details.thinking"))
    )
    wait.until(
        lambda d: (
            "Paris" in thinking.find_element(By.CSS_SELECTOR, ".body").get_attribute("textContent")
        )
    )
    answer = wait.until(
        shown.text_to_be_present_in_element(
            (By.CSS_SELECTOR, ".assistant:last-child .answer"), "sunny in Paris"
        )
    )
    assert answer
    blocks = driver.find_elements(By.CSS_SELECTOR, "details.thinking")
    assert len(blocks) == 2  # one per model turn, each left open to be read once it ended
    assert all(block.get_attribute("open") is not None for block in blocks)
    assert all(b.find_element(By.TAG_NAME, "summary").text == "Thinking" for b in blocks)
    assert all("Paris" in b.find_element(By.CSS_SELECTOR, ".body").text for b in blocks)
    usage = wait.until(shown.visibility_of_element_located((By.CSS_SELECTOR, ".usage")))
    assert usage.text.startswith("claude-sonnet-4-6 · 2 requests · ")
    assert "thinking" in usage.text
    call = driver.find_element(By.CSS_SELECTOR, ".tool-call")
    assert call.text.startswith("get_weather(") and "sunny in Paris, 21 C" in call.text
    # the thinking came before the answer on the page
    order = driver.execute_script(
        "return [...document.querySelectorAll('details.thinking, .answer')].map(e => e.tagName)"
    )
    assert order[0] == "DETAILS"
    driver.save_screenshot(str(tmp_path / "chat.png"))

    driver.refresh()  # the conversation is stored: the page shows it again
    last_answer = (By.CSS_SELECTOR, ".assistant:last-child .answer")
    wait.until(shown.text_to_be_present_in_element(last_answer, "sunny in Paris"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "details.thinking")) == 2


def test_the_thinking_visibly_grows_on_the_emulator_without_a_key(
    page_url: str, browser: object, tmp_path: Path
) -> None:
    # issue 26: the emulator answered a turn in 0.2 s and the thinking collapsed at once, so
    # `make chat` never showed thinking stream in offline
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    driver.get(page_url)
    driver.find_element(By.ID, "new").click()
    wait = WebDriverWait(driver, 30)
    notice = wait.until(shown.visibility_of_element_located((By.ID, "emulator")))
    assert "thinkagent emulator" in notice.text
    assert driver.find_element(By.ID, "model").text == (
        "claude-sonnet-4-6 on the thinkagent emulator (no API key set)"
    )
    question = wait.until(shown.element_to_be_clickable((By.ID, "question")))
    question.send_keys("What's the weather in Paris?", Keys.ENTER)
    body = (By.CSS_SELECTOR, "details.thinking .body")
    wait.until(lambda d: d.find_element(*body).get_attribute("textContent"))

    samples: list[tuple[int, bytes]] = []  # the first thinking block's length, the screenshot
    for _ in range(6):
        text = driver.find_element(*body).get_attribute("textContent") or ""
        shot = driver.get_screenshot_as_png()
        (tmp_path / f"thinking-{len(samples)}.png").write_bytes(shot)
        samples.append((len(text), shot))
        time.sleep(0.2)
    lengths = [length for length, _ in samples]
    growing = max(
        (
            j - i + 1
            for i in range(len(samples))
            for j in range(i, len(samples))
            if all(lengths[k] < lengths[k + 1] for k in range(i, j))
        ),
        default=1,
    )
    assert growing >= 3, f"the thinking did not grow over three screenshots: {lengths}"
    assert len({shot for _, shot in samples}) >= 3  # and the page looked different each time


def test_the_favicon_is_served(page_url: str) -> None:
    import httpx

    for path in ("/favicon.ico", "/favicon.svg"):
        icon = httpx.get(page_url + path, timeout=10)
        assert icon.status_code == 200
        assert icon.headers["content-type"].startswith("image/svg+xml")
        assert icon.text.startswith("<svg")


def test_redacted_thinking_is_shown_as_such(page_url: str, browser: object) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    from thinkagent.emulator.brain import MAGIC_REDACTED_PROMPT

    driver: WebDriver = browser  # type: ignore[assignment]
    driver.get(page_url)
    driver.find_element(By.ID, "new").click()
    wait = WebDriverWait(driver, 30)
    question = wait.until(shown.element_to_be_clickable((By.ID, "question")))
    question.send_keys(f"{MAGIC_REDACTED_PROMPT} What's the weather in Paris?", Keys.ENTER)
    block = wait.until(
        shown.presence_of_element_located((By.CSS_SELECTOR, "details.thinking.redacted"))
    )
    last_answer = (By.CSS_SELECTOR, ".assistant:last-child .answer")
    wait.until(shown.text_to_be_present_in_element(last_answer, "sunny in Paris"))
    assert block.find_element(By.TAG_NAME, "summary").text == "Thinking (redacted)"
