"""A turn judged while a hand covered tiles names them in the verdict (`hidden`, issue #19:
hidden is not gone): the page shows them as tiles with a line to check them, in the page's
language. Real `rummikub serve`, Debian's chromium; the page's own format module renders a
verdict as the server sends it (`tests/test_server_live_hidden.py` makes such a verdict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.page_helpers import Server, chromium_path, launch, verdict_panel

CATALOGUES = Path(__file__).resolve().parents[1] / "app" / "static" / "i18n"
VERDICT = {"round": 1, "turn": 2, "player": "Ann", "legal": True, "passed": True,
           "timed_out": False, "played": [], "left_table": [], "problems": [],
           "problem_ids": [], "invalid_sets": [], "preexisting_invalid": [],
           "preexisting_ids": [], "draws": 1, "penalty": None, "time_used_s": 12.0,
           "suggestion": None, "warnings": [], "check": [], "hidden": ["K5", "R7"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    chromium_path()
    s = Server(tmp_path_factory.mktemp("verdict") / "data").start()
    yield s
    s.stop()


def _rendered(page, server, lang: str, verdict: dict) -> str:
    return verdict_panel(page, server, lang, verdict, """
        const dd = el.querySelector('.hidden-tiles');
        return dd ? dd.previousElementSibling.textContent + ' | ' + dd.textContent : '';""")


@pytest.mark.parametrize("lang, head", [("en", "Hidden when judged"),
                                        ("nl", "Bedekt bij het oordeel")])
def test_the_verdict_names_the_tiles_a_hand_hid(server, lang, head):
    from playwright.sync_api import sync_playwright

    catalogue = json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page()
        text = _rendered(page, server, lang, VERDICT)
        assert text.startswith(head + " | ")
        assert "5" in text and "7" in text  # the two tiles, drawn as chips
        assert catalogue["verdict.hidden_note"] in text
        # No hidden tiles: no such line.
        assert _rendered(page, server, lang, {**VERDICT, "hidden": []}) == ""
        browser.close()
