"""The tournament hall in a real browser (Debian's chromium) on a real server process:
12 players, 3 tables, 2 rounds. A table phone joins by the link its sheet's QR code holds,
photographs its table and calls the referee; the director answers from the console and
overrides a score with a reason and voids a turn; the audit log, the console's standings
and the big screen (never reloaded) show both; an archive imports into an empty server
unchanged.

With HALL_SCREENSHOTS=<folder> the console, a table sheet and the big screen are saved
there (docs/screenshots/hall-*.png were made so).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.page_helpers import (
    LAN_NAME,
    LAPTOP,
    Server,
    api,
    chromium_path,
    launch,
    phone_context,
    turn_photos,
)

PLAYERS = ["Ann", "Ben", "Cas", "Dee", "Eva", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lou"]
RACKS = ("R5 J K13", "B2", "O10 O11")


@pytest.fixture()
def servers(tmp_path):
    chromium_path()
    first = Server(tmp_path / "hall").start()
    second = Server(tmp_path / "empty").start()
    yield first, second
    first.stop()
    second.stop()


def shot(page, name: str) -> None:
    folder = os.environ.get("HALL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"hall-{name}.png"))


def test_a_hall_of_three_tables_over_two_rounds(servers, tmp_path):
    import httpx
    from playwright.sync_api import expect, sync_playwright

    server, empty = servers
    made = api(server, "POST", "/api/tournaments", server.table_token, {
        "name": "Club night", "format": "club", "timer": "2min",
        "switches": {"rounds": 2, "games_per_round": 1}})
    tid, director, watch = made["tournament"], made["director_token"], made["watch_token"]
    api(server, "POST", f"/api/tournaments/{tid}/players", director, {"players": PLAYERS})
    before, _after = turn_photos()

    with sync_playwright() as pw:
        browser = launch(pw)
        laptop = browser.new_context(viewport=LAPTOP)
        console = laptop.new_page()
        errors = []
        console.on("pageerror", lambda e: errors.append(str(e)))
        console.goto(f"{server.url}/director.html?t={tid}&token={director}")
        expect(console.locator("#round-label")).to_have_text("Round 0 of 2")
        console.click("#btn-seat")
        cards = console.locator(".table-card")
        expect(cards).to_have_count(3)
        expect(console.locator("#round-label")).to_have_text("Round 1 of 2")

        screen_context = browser.new_context(viewport={"width": 1920, "height": 1080})
        screen = screen_context.new_page()
        screen.on("pageerror", lambda e: errors.append(str(e)))
        screen.goto(f"{server.url}/screen.html?t={tid}&token={watch}")
        expect(screen.locator("#standings tr")).to_have_count(13)
        expect(screen.locator("#seating li")).to_have_count(3)

        sheets = laptop.new_page()
        sheets.goto(f"{server.url}/director.html?t={tid}&token={director}#sheets")
        expect(sheets.locator(".sheet")).to_have_count(3)
        sheets.wait_for_function("() => [...document.querySelectorAll('.sheet img')]"
                                 ".every((i) => i.complete && i.naturalWidth > 0)")
        shot(sheets, "sheet")

        # Table 2's phone opens the link its sheet's QR code holds.
        tables = api(server, "GET", f"/api/tournaments/{tid}/console", director)["tables"]
        table = tables[1]
        link = (f"http://{LAN_NAME}:{server.port}/?g={table['game_id']}"
                f"&token={table['token']}")
        sheet_link = f"{server.url}/?g={table['game_id']}&token={table['token']}"
        assert sheets.locator(".sheet img").nth(1).get_attribute("src") == \
            f"/api/qr.svg?data={quote(sheet_link, safe='')}"
        phone = phone_context(browser, server).new_page()
        phone.on("pageerror", lambda e: errors.append(str(e)))
        phone.goto(link)
        phone.click("#start-round")
        expect(phone.locator("#screen-play")).to_be_visible()
        phone.locator("#table-photo").set_input_files(str(before))
        expect(phone.locator("#table-line")).to_have_text("The table is valid", timeout=60_000)
        expect(phone.locator("#btn-call-referee")).to_be_visible()
        phone.click("#btn-call-referee")
        expect(phone.locator("#toast")).to_contain_text("The referee is called")

        # The call arrives with the table's picture; the director answers it.
        call = console.locator("#calls form.call")
        expect(call).to_have_count(1)
        expect(cards.nth(1).locator(".flag")).to_contain_text("referee called")
        console.wait_for_function("() => { const i = document.querySelector('#calls img');"
                                  " return i && i.complete && i.naturalWidth > 0; }")
        shot(console, "console")
        call.locator("input[name=answer]").fill("the run stands")
        call.locator("button").click()
        expect(console.locator("#error")).to_be_hidden()
        expect(console.locator("#calls")).to_contain_text("No open calls.")
        expect(console.locator("#log")).to_contain_text("the run stands")

        # Table 2's opening meld is judged (through the API): 120 points, a legal turn.
        game2 = f"/api/games/{table['game_id']}"
        turn_id = api(server, "GET", game2, table["token"])["round"]["turn"]["id"]
        judged = api(server, "POST", f"{game2}/turn/end", table["token"], {"turn_id": turn_id})
        assert judged["legal"], judged["message"]

        # Every table plays its game (the racks counted through the API); the big screen
        # follows without a reload.
        screen.evaluate("() => { window.notReloaded = true; }")
        for t in tables:
            game = f"/api/games/{t['game_id']}"
            if t is not table:
                api(server, "POST", f"{game}/rounds", t["token"])
            api(server, "POST", f"{game}/round/end", t["token"], {
                "winner": t["players"][0], "racks": dict(zip(t["players"][1:], RACKS,
                                                             strict=False))})
        winners_points = 43 + 2 + 21
        expect(screen.locator("#standings tr").nth(1)).to_contain_text(str(winners_points))

        # An override with its reason: in the log and in both standings.
        target = tables[2]["players"][1]
        form = console.locator("#override-form")
        form.locator("[name=kind]").select_option("score")
        form.locator("[name=round]").fill("1")
        form.locator("[name=table]").fill("3")
        form.locator("[name=number]").fill("1")
        form.locator("[name=player]").fill(target)
        form.locator("[name=score]").fill("100")
        form.locator("button").click()
        expect(console.locator("#error")).to_contain_text("reason")  # refused without one
        form.locator("[name=reason]").fill("rack counted twice")
        form.locator("button").click()
        expect(console.locator("#log")).to_contain_text("rack counted twice")
        expect(console.locator("#standings tr").nth(1)).to_contain_text(target)
        expect(screen.locator("#standings tr").nth(1)).to_contain_text(target)
        expect(screen.locator("#standings tr").nth(1)).to_contain_text("100")

        # Round 2 is seated from the standings: the leader at table 1.
        console.click("#btn-seat")
        expect(console.locator("#round-label")).to_have_text("Round 2 of 2")
        expect(cards.nth(0)).to_contain_text(target)
        expect(screen.locator("#seating li").nth(0)).to_contain_text(target)
        expect(screen.locator("#round-label")).to_have_text("Round 2 of 2")
        assert screen.evaluate("() => window.notReloaded") is True
        shot(screen, "screen")

        # A void turn counts: table 2's opening meld never happened, so its tiles go back
        # on the opener's rack and nobody went out; the big screen follows.
        opener = tables[1]["players"][0]
        form.locator("[name=kind]").select_option("void-turn")
        form.locator("[name=table]").fill("2")
        form.locator("[name=number]").fill(str(judged["turn"]))
        form.locator("[name=drawn]").fill("-")
        form.locator("[name=reason]").fill("played before the clock started")
        form.locator("button").click()
        expect(console.locator("#override-effect")).to_contain_text("counted again")
        expect(console.locator("#log")).to_contain_text("played before the clock started")
        voided = api(server, "GET", f"/api/tournaments/{tid}/standings", watch)["standings"]
        line = next(s for s in voided if s["player"] == opener)
        assert line["tournament_points"] < winners_points
        row = screen.locator("#standings tr", has_text=opener)
        expect(row).to_contain_text(str(line["tournament_points"]))
        expect(screen.locator("#standings tr").nth(1)).to_contain_text(voided[0]["player"])
        assert screen.evaluate("() => window.notReloaded") is True
        assert errors == []
        browser.close()

    # The archive into an empty server: the same standings and the same history.
    archive = httpx.get(f"{server.url}/api/tournaments/{tid}/archive",
                        headers={"X-Token": director}, timeout=60).content
    response = httpx.post(f"{empty.url}/api/tournaments/import",
                          headers={"X-Token": empty.table_token},
                          files={"archive": ("t.json", archive, "application/json")},
                          timeout=60)
    assert response.status_code == 201, response.text
    exported = api(server, "GET", f"/api/tournaments/{tid}/export.json", director)
    assert api(empty, "GET", f"/api/tournaments/{tid}/export.json", director) == exported
    assert exported["standings"] == voided
    assert [(g["round"], g["table"]) for g in exported["games"]] == [
        (r, t) for r in (1, 2) for t in (1, 2, 3)]
