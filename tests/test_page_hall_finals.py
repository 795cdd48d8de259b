"""The finals in a real browser (Debian's chromium) on a real server process: 8 players,
one qualifying round, the director seats the semi-finals and the final from the console,
and the big screen (never reloaded) shows each stage and then the winner.
HALL_SCREENSHOTS=<folder> saves the big screen with the finals (docs/screenshots)."""

from __future__ import annotations

import pytest

from tests.page_helpers import LAPTOP, Server, api, chromium_path, launch
from tests.test_page_hall import shot

PLAYERS = ["Ann", "Ben", "Cas", "Dee", "Eva", "Fay", "Gus", "Hal"]
RACKS = ("R5 J K13", "B2", "O10 O11")


@pytest.fixture()
def server(tmp_path):
    chromium_path()
    started = Server(tmp_path / "hall").start()
    yield started
    started.stop()


def play(server, table, games=1):
    """`games` games at a table: its first player goes out each time."""
    for _ in range(games):
        game = f"/api/games/{table['game_id']}"
        api(server, "POST", f"{game}/rounds", table["token"])
        api(server, "POST", f"{game}/round/end", table["token"], {
            "winner": table["players"][0],
            "racks": dict(zip(table["players"][1:], RACKS, strict=False))})


def test_the_director_seats_the_finals_and_the_big_screen_shows_the_winner(server):
    from playwright.sync_api import expect, sync_playwright

    made = api(server, "POST", "/api/tournaments", server.table_token, {
        "name": "Final night", "format": "championship",
        "switches": {"rounds": 1, "games_per_round": 1,
                     "finals": {"size": 8, "games": 1, "wins_needed": 2}}})
    tid, director, watch = made["tournament"], made["director_token"], made["watch_token"]
    api(server, "POST", f"/api/tournaments/{tid}/players", director, {"players": PLAYERS})
    api(server, "POST", f"/api/tournaments/{tid}/rounds", director, {"round": 1})

    def tables():
        return api(server, "GET", f"/api/tournaments/{tid}/console", director)["tables"]

    for table in tables():
        play(server, table)
    with sync_playwright() as pw:
        browser = launch(pw)
        errors = []
        console = browser.new_context(viewport=LAPTOP).new_page()
        console.on("pageerror", lambda e: errors.append(str(e)))
        console.goto(f"{server.url}/director.html?t={tid}&token={director}")
        screen = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        screen.on("pageerror", lambda e: errors.append(str(e)))
        screen.goto(f"{server.url}/screen.html?t={tid}&token={watch}")
        expect(screen.locator("#standings tr")).to_have_count(9)
        screen.evaluate("() => { window.notReloaded = true; }")

        expect(console.locator("#btn-seat")).to_be_hidden()
        expect(console.locator("#btn-finals")).to_have_text("Seat the semi-finals")
        console.click("#btn-finals")
        expect(screen.locator(".finals-table")).to_have_count(2)
        expect(screen.locator(".finals-table").nth(0)).to_contain_text("Semi-final 1")
        expect(console.locator(".table-card")).to_have_count(2)
        for table in tables():
            play(server, table)
        expect(console.locator("#btn-finals")).to_have_text("Seat the final")
        console.click("#btn-finals")
        expect(screen.locator(".finals-table")).to_have_count(3)
        final = tables()[0]
        play(server, final, games=2)
        expect(screen.locator(".champion")).to_have_text(f"Winner: {final['players'][0]}")
        expect(screen.locator("#round-label")).to_have_text("Final")
        expect(screen.locator('.finals-table[data-stage="final"]')).to_contain_text(
            "first to 2 wins")
        expect(console.locator("#btn-finals")).to_be_hidden()
        assert screen.evaluate("() => window.notReloaded") is True
        shot(screen, "finals")  # HALL_SCREENSHOTS=docs/screenshots
        assert errors == []
        browser.close()
