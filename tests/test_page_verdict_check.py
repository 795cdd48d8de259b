"""What a verdict asks a person to check (`check`: tiles under a hand when the turn was
judged, tiles at one photo's edge) is shown where the verdict is shown, in the page's
language: the server sends each as a message id with parameters (`check_ids`), made by the
same `vision.game.checks` notes whose English the CLI prints. Real `rummikub serve`,
Debian's chromium, the page's own format module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.page_helpers import Server, chromium_path, launch, verdict_panel
from tests.test_page_verdict_hidden import VERDICT
from vision.game.checks import edge_note, hidden_note

CATALOGUES = Path(__file__).resolve().parents[1] / "app" / "static" / "i18n"
NOTES = [hidden_note(["K5", "R7"]), edge_note([], ["O9"])]
CHECKED = {**VERDICT, "check": [str(n) for n in NOTES], "check_ids": [n.ref() for n in NOTES]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    chromium_path()
    s = Server(tmp_path_factory.mktemp("check") / "data").start()
    yield s
    s.stop()


def _checks(page, server, lang: str, verdict: dict) -> list[str]:
    """The verdict panel's "to check" heading and lines, as the page renders them."""
    return verdict_panel(page, server, lang, verdict, """
        const list = el.querySelector('ul.checks');
        if (!list) return [];
        return [list.previousElementSibling.textContent,
                ...[...list.querySelectorAll('li')].map((li) => li.textContent)];""")


def _expected(lang: str) -> list[str]:
    """The catalogue's words for the two notes, tiles said as words."""
    words = json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))

    def tile(code: str) -> str:
        return words["tile.words"].format(color=words[f"color.{code[0]}"], number=code[1:])

    hidden = words["server.check.hidden"]["other"].format(
        count=2, tiles=f"{tile('K5')}, {tile('R7')}")
    edge = words["server.check.edge"]["one"].format(count=1, tiles=tile("O9"))
    return [words["verdict.check"], hidden, edge]


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_the_verdict_shows_what_to_check_in_the_page_language(server, lang):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        shown = _checks(page, server, lang, CHECKED)
        assert shown == _expected(lang)
        if lang != "en":  # not the English words the API and the CLI keep
            assert not set(shown) & set(_expected("en")) and str(NOTES[0]) not in shown
        # Nothing to check: no such list.
        assert _checks(page, server, lang, {**CHECKED, "check": [], "check_ids": []}) == []
        browser.close()


def test_a_verdict_stored_before_the_ids_shows_its_english_words(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        old = {k: v for k, v in CHECKED.items() if k != "check_ids"}
        shown = _checks(page, server, "nl", old)
        assert shown[1:] == [str(n) for n in NOTES]
        browser.close()
