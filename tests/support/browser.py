"""Headless Chromium from the Debian packages, driven by Selenium, for the console tests.

Both executables are given explicitly: with a driver path in the `Service`, Selenium skips
Selenium Manager altogether, so nothing is looked up or downloaded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver as ChromeDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.command import Command
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

__all__ = ["CHROMEDRIVER", "CHROMIUM", "DESKTOP", "NARROW", "Browser", "chromium", "sign_in"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT_S = 30.0
DESKTOP = (1280, 800)
NARROW = (390, 844)
T = TypeVar("T")


class Browser:
    """A driver with the waits and screenshots the console tests use."""

    def __init__(self, driver: ChromeDriver, base_url: str, shots: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self.shots = shots

    def open(self, path: str = "/") -> None:
        self.driver.get(self.base_url + path)

    def go(self, hash_path: str) -> None:
        """Navigate inside the page (the console routes on the URL hash)."""
        self.driver.execute_script("location.hash = arguments[0]", hash_path)

    def until(
        self,
        condition: Callable[[WebDriver], Literal[False] | T],
        timeout: float = WAIT_S,
        message: str = "",
    ) -> T:
        return WebDriverWait(self.driver, timeout).until(condition, message)

    def find(self, css: str, timeout: float = WAIT_S) -> WebElement:
        """The visible element matching `css`, waiting for it."""
        return self.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)), timeout)

    def click(self, css: str) -> None:
        self.find(css)
        self.until(ec.element_to_be_clickable((By.CSS_SELECTOR, css))).click()

    def text_in(self, css: str, text: str, timeout: float = WAIT_S) -> None:
        """Wait until `css` holds `text`; on time-out, say what the element held."""
        present = ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text)
        try:
            self.until(present, timeout)
        except TimeoutException:
            found = self.driver.find_elements(By.CSS_SELECTOR, css)
            held = found[0].text if found else "(no such element)"
            raise AssertionError(f"{css} never held {text!r}; it holds {held!r}") from None

    def viewport(self, size: tuple[int, int]) -> None:
        width, height = size
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": size == NARROW},
        )

    def screenshot(self, name: str) -> Path:
        """Save the viewport as `<shots>/<name>.png`."""
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def script_errors(self) -> list[str]:
        """Severe messages of the page's console other than HTTP error statuses (which the
        console shows to the user as messages): uncaught exceptions, failed imports."""
        # `get_log` is untyped; this is the command it sends.
        entries: list[dict[str, Any]] = self.driver.execute(Command.GET_LOG, {"type": "browser"})[
            "value"
        ]
        return [
            e["message"]
            for e in entries
            if e["level"] == "SEVERE" and "Failed to load resource" not in e["message"]
        ]


def sign_in(b: Browser, key: str) -> None:
    """Open the console and sign in with `key`; returns once a page is shown."""
    b.open("/")
    field = b.find("#api-key")
    field.send_keys(key)
    field.send_keys(Keys.ENTER)
    b.find("#nav a[aria-current='page']")


@contextmanager
def chromium(base_url: str, shots: Path) -> Iterator[Browser]:
    """A headless Chromium at 1280x800; fails clearly when the packages are missing."""
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not binary.exists():
            raise RuntimeError(f"{binary} is missing: deploy/local/setup.sh installs it")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    browser = Browser(driver, base_url, shots)
    try:
        browser.viewport(DESKTOP)
        yield browser
    finally:
        driver.quit()
