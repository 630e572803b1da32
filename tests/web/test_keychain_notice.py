"""The Settings page on a Linux machine without a secret service (the real keyring module, no back end): a calm
notice of what that means, in Debian's Chromium, not a red error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orcmem.host import keystore
from tests.web.support import LiveServer, shot

pytestmark = pytest.mark.browser


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def test_the_settings_page_says_calmly_there_is_no_keychain(
    page: Any, live_server: LiveServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keyring = pytest.importorskip("keyring")
    from keyring.backends import fail

    if not isinstance(keyring.get_keyring(), fail.Keyring):
        pytest.skip("this machine has a keychain")
    monkeypatch.setattr(keystore, "_keyring", lambda: keyring)  # the real module, not the tests' in-memory one
    page.goto(live_server.launch("/settings"))
    note = page.locator("#keychain-note")
    expect(note).to_have_text(keystore.NO_KEYCHAIN)
    expect(note).not_to_have_class("notice notice-error")
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_text(keystore.STORAGE_ERROR)).to_have_count(0)
    shot(page, "settings-no-keychain", tmp_path)
