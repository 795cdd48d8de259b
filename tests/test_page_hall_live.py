"""The big screen and the director's console live in a real browser (Debian's chromium) on
a real server process: they say "Live", fetch nothing while nothing changes (no polling),
and show a change within 1 s of its answer without a reload, each change costing the screen
one fetch of the standings. When the server goes away they say "Reconnecting…", and once
it is back they are live again and follow the next change. In French, the words are French.
"""

from __future__ import annotations

import time

import pytest

from tests.page_helpers import LAPTOP, Server, api, chromium_path, launch

PLAYERS = ["Ann", "Ben", "Cas", "Dee", "Eva", "Fay", "Gus", "Hal"]
QUIET_MS = 5000  # longer than the old polls (2 s console, 3 s screen): no fetch meanwhile


@pytest.fixture()
def server(tmp_path):
    chromium_path()
    process = Server(tmp_path / "hall").start()
    yield process
    process.stop()


def _tournament(server):
    made = api(server, "POST", "/api/tournaments", server.table_token, {
        "name": "Live night", "format": "club", "timer": "2min",
        "switches": {"rounds": 2, "games_per_round": 1}})
    tid, director = made["tournament"], made["director_token"]
    api(server, "POST", f"/api/tournaments/{tid}/players", director, {"players": PLAYERS})
    api(server, "POST", f"/api/tournaments/{tid}/rounds", director, {"round": 1})
    tables = api(server, "GET", f"/api/tournaments/{tid}/console", director)["tables"]
    return made, tables


def _counted(page, fetches: list, in_flight: set):
    def started(r):
        if r.resource_type in ("fetch", "xhr") and "/api/" in r.url:
            fetches.append(r.url.split("?")[0])
            in_flight.add(r)

    page.on("request", started)
    page.on("requestfinished", lambda r: in_flight.discard(r))
    page.on("requestfailed", lambda r: in_flight.discard(r))


def _settled(page, fetches: list, in_flight: set, quiet_ms: int = 1000,
             timeout_s: float = 30) -> None:
    """Waits until the page has nothing in flight and started nothing for `quiet_ms`: on
    going live a page fetches everything once more, and under load that can end well after
    "Live" shows."""
    deadline = time.monotonic() + timeout_s
    seen, since = len(fetches), time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(100)
        if len(fetches) != seen or in_flight:
            seen, since = len(fetches), time.monotonic()
        elif (time.monotonic() - since) * 1000 >= quiet_ms:
            return
    raise AssertionError(f"the page kept fetching for {timeout_s} s: {fetches[-5:]}")


def _shows_standings_within_1_s(page, server, made, since: float) -> None:
    """The page shows the standings the server has now, 1 s after `since` at the latest."""
    from playwright.sync_api import expect

    rows = api(server, "GET", f"/api/tournaments/{made['tournament']}/standings",
               made["watch_token"])["standings"]
    left_ms = max(50, 1000 - (time.perf_counter() - since) * 1000)
    table = page.locator("#standings")
    expect(table.locator("tr td:nth-child(2)")).to_have_text([r["player"] for r in rows],
                                                               timeout=left_ms)
    expect(table.locator("tr td:nth-child(3)")).to_have_text(
        [str(r["tournament_points"]) for r in rows], timeout=50)


def _play(server, table, racks):
    game = f"/api/games/{table['game_id']}"
    api(server, "POST", f"{game}/rounds", table["token"])
    api(server, "POST", f"{game}/round/end", table["token"], {
        "winner": table["players"][0], "racks": dict(zip(table["players"][1:], racks,
                                                         strict=False))})


def test_the_big_screen_and_the_console_follow_changes_without_polling(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    made, tables = _tournament(server)
    tid = made["tournament"]
    standings_url = f"{server.url}/api/tournaments/{tid}/standings"
    with sync_playwright() as pw:
        browser = launch(pw)
        errors: list[str] = []
        screen = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
        console = browser.new_context(viewport=LAPTOP).new_page()
        seen_by_screen: list[str] = []
        seen_by_console: list[str] = []
        in_flight = {screen: set(), console: set()}
        for page, fetches in ((screen, seen_by_screen), (console, seen_by_console)):
            page.on("pageerror", lambda e: errors.append(str(e)))
            _counted(page, fetches, in_flight[page])
        screen.goto(f"{server.url}/screen.html?t={tid}&token={made['watch_token']}")
        console.goto(f"{server.url}/director.html?t={tid}&token={made['director_token']}")
        for page in (screen, console):
            expect(page.locator("#live-status")).to_have_text("Live")
            expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        expect(screen.locator("#standings tr")).to_have_count(len(PLAYERS) + 1)
        expect(console.locator(".table-card")).to_have_count(2)
        screen.evaluate("() => { window.notReloaded = true; }")

        # Nothing changes: nothing is fetched.
        _settled(screen, seen_by_screen, in_flight[screen])
        _settled(console, seen_by_console, in_flight[console])
        quiet_screen, quiet_console = len(seen_by_screen), len(seen_by_console)
        screen.wait_for_timeout(QUIET_MS)
        assert seen_by_screen[quiet_screen:] == []
        assert seen_by_console[quiet_console:] == []

        # A table's game is scored: on the big screen within 1 s, for one fetch.
        _play(server, tables[0], ("R5 J K13", "B2", "O10 O11"))
        scored = time.perf_counter()
        _shows_standings_within_1_s(screen, server, made, scored)
        _shows_standings_within_1_s(console, server, made, scored)
        expect(screen.locator("#standings tr").nth(1)).to_contain_text(str(43 + 2 + 21))
        screen.wait_for_timeout(500)
        assert seen_by_screen[quiet_screen:] == [standings_url]
        assert screen.evaluate("() => window.notReloaded") is True

        # An override through the API (another director's laptop): the same.
        before = len(seen_by_screen)
        api(server, "POST", f"/api/tournaments/{tid}/overrides", made["director_token"], {
            "kind": "score", "reason": "recounted", "body": {
                "round": 1, "table": 1, "game": 1, "player": tables[0]["players"][1],
                "score": 200}})
        overridden = time.perf_counter()
        _shows_standings_within_1_s(screen, server, made, overridden)
        expect(screen.locator("#standings tr").nth(1)).to_contain_text(tables[0]["players"][1])
        expect(console.locator("#log")).to_contain_text("recounted", timeout=1000)
        screen.wait_for_timeout(500)
        assert seen_by_screen[before:] == [standings_url]

        # The server goes away and comes back on the same address: the pages say so,
        # reconnect by themselves, and follow the next change.
        server.stop()
        for page in (screen, console):
            expect(page.locator("#live-status")).to_have_text("Reconnecting… (updated every "
                                                              "10 s meanwhile)")
        server.start(timeout=120)
        for page in (screen, console):
            expect(page.locator("#live-status")).to_have_text("Live", timeout=60_000)
        _play(server, tables[1], ("K1", "K2", "K3"))
        _shows_standings_within_1_s(screen, server, made, time.perf_counter())
        expect(screen.locator("#standings")).to_contain_text(tables[1]["players"][0])
        assert screen.evaluate("() => window.notReloaded") is True

        # In French.
        french = browser.new_context(locale="fr-FR", viewport=LAPTOP).new_page()
        french.goto(f"{server.url}/screen.html?t={tid}&token={made['watch_token']}")
        expect(french.locator("#live-status")).to_have_text("En direct")
        assert errors == []
        browser.close()


COALESCED = """
globalThis.location = { search: "?t=T&token=K", protocol: "http:", host: "hall" };
const { coalesced } = await import(process.argv[1]);
const fetched = [];
const waits = [];
const run = coalesced((parts) => new Promise((done) => {
  fetched.push([...parts].sort()); waits.push(done);
}));
const first = run(["tables"]);
const second = run(["log"]);
run(["standings", "log"]);
await new Promise((r) => setTimeout(r, 10));
waits.shift()();  // the first fetch ends: the two told meanwhile go as one
await new Promise((r) => setTimeout(r, 10));
waits.shift()();
await Promise.all([first, second]);
run(["calls"]);
await new Promise((r) => setTimeout(r, 10));
waits.shift()();
console.log(JSON.stringify(fetched));
"""


def test_changes_told_during_a_fetch_are_fetched_together_after_it():
    import json
    import shutil
    import subprocess

    from tests.page_helpers import ROOT

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    module = (ROOT / "app" / "static" / "js" / "hall" / "hallsocket.js").as_uri()
    done = subprocess.run([node, "--input-type=module", "-e", COALESCED, module],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["tables"], ["log", "standings"], ["calls"]]
