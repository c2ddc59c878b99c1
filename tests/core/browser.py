"""Real-browser tests: headless Chromium from Debian's packages, driven by Playwright.

A pytest plugin (loaded by tests/conftest.py): the fixtures `chromium`, `playwright` and
`browser`, and `launch` for a browser with extra flags. Chromium is installed by the test script
(scripts/test.sh, with apt-get as root) before pytest starts; where it is missing the browser
tests skip, saying why. Playwright drives that Chromium: `playwright install` (a download of its
own) is never used.
"""

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium() -> Path:
    if not CHROMIUM.exists():
        # Installing is the test script's work (scripts/test.sh), never a fixture's.
        pytest.skip(
            f"Chromium not found at {CHROMIUM}: install Debian's package "
            "(apt-get install -y chromium, as scripts/test.sh does as root) "
            "or set CHROMIUM_PATH"
        )
    return CHROMIUM


@pytest.fixture
def playwright(chromium, live_server, monkeypatch) -> Playwright:
    # Playwright's sync API keeps an asyncio loop running in this thread, and Django's ORM
    # refuses to run beside one unless told; the ORM calls here are plain synchronous ones in
    # the test's own thread (this is Playwright's advice for Django tests).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as started:
        yield started


def launch(playwright: Playwright, *extra_args: str) -> Browser:
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args], headless=True
    )


@pytest.fixture
def browser(playwright) -> Browser:
    launched = launch(playwright)
    yield launched
    launched.close()


class Watched:
    """Every request a page makes (and which of them failed, why), every console message and
    every script error."""

    def __init__(self, page):
        self.requests: list[str] = []
        self.failed: dict[str, str] = {}
        self.console: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("requestfailed", lambda request: self.failed.update({request.url: request.failure}))
        page.on("console", lambda message: self.console.append(message.text))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def strangers(self, base_url: str) -> list[str]:
        """The requests the page began to anywhere but `base_url` (its blob: URLs are its own)."""
        own = (f"{base_url}/", f"blob:{base_url}/")
        return [url for url in self.requests if not url.startswith(own)]
