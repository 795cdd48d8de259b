"""Photo mode with a hand over the table (issue #19): real `rummikub serve`, Debian's
chromium through Playwright at 412 x 915. The page says, in its language, to move the hand
and take the photo again, and judges nothing; the same photo without the hand is judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.page_helpers import Server, chromium_path, launch, untimed_round
from tests.test_cover import jpeg, painted

I18N = Path(__file__).resolve().parent.parent / "app" / "static" / "i18n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    chromium_path()
    s = Server(tmp_path_factory.mktemp("cover") / "data").start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def photos(real_photos_dir, tmp_path_factory):
    """(covered, clean) photo files of one real valid/ table."""
    from tests.server_helpers import reader
    from training.real_data import load_split

    image = next(p for p in load_split("valid", real_photos_dir) if p.key == "rummy4-1").read()
    folder = tmp_path_factory.mktemp("photos")
    covered, clean = folder / "covered.jpg", folder / "clean.jpg"
    covered.write_bytes(jpeg(painted(reader(), image)))
    clean.write_bytes(jpeg(image))
    return covered, clean


@pytest.mark.parametrize("locale, lang", [("en-GB", "en"), ("nl-NL", "nl")])
def test_a_covered_photo_is_refused_in_the_page_language(server, photos, locale, lang):
    from playwright.sync_api import expect, sync_playwright

    words = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))[
        "server.photo.covered"]
    covered, clean = photos
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_context(viewport={"width": 412, "height": 915},
                                   locale=locale).new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        untimed_round(page, server)
        page.locator("#table-photo").set_input_files(str(covered))
        expect(page.locator("#toast")).to_contain_text(words, timeout=30_000)
        assert page.evaluate("() => window.rummikub.state.reading") in (None, {})
        # The photo again, without the hand: judged.
        page.locator("#table-photo").set_input_files(str(clean))
        page.wait_for_function("() => window.rummikub.state.reading && "
                               "window.rummikub.state.reading.tiles.length > 0",
                               timeout=30_000)
        # The refusal was the covered photo's: it is not left beside this one's verdict.
        expect(page.locator("#toast")).to_be_hidden(timeout=2_000)
        assert not errors, errors
        browser.close()
