"""The table page as a family plays it (issue #21): real `rummikub serve`, Debian's chromium
through Playwright, photo mode (the page is opened by a LAN name, as a phone opens it).

One server and one browser for the module. A whole game at 412 x 915 checks, after every
step, that whose turn it is and the countdown are in view and that the picture with its
valid / not valid line fits the first screen; along the way: the sizes read across a table,
a pass worded as a pass, the penalty said once, what goes back marked after "End turn",
every verdict spoken once in the page's voice, going out during a running turn costing no
penalty, and the rack card's warnings. Then the same game in Dutch and in French with no
English on any screen; a second phone joining from the printed link (at 1366 x 768).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import pytest

from tests.page_helpers import LAN_NAME, Server, api, chromium_path, launch, turn_photos
from tests.test_rack_photo import rack_with_tiles_beside

STATIC = Path(__file__).resolve().parent.parent / "app" / "static"
PHONE = {"width": 412, "height": 915}
LAPTOP = {"width": 1366, "height": 768}
# The sizes chosen in docs/decisions/legibility.md (CSS px at 412 px width).
SIZES = {"#countdown": 88, "#turn-player": 40, "#verdict .headline": 28, ".tile": 26}
OVERLAY = {"tile": 14, "set": 20}
MAGENTA = (255, 79, 216)

# Speech and canvas text, recorded: what was said in which voice, what was drawn how big.
RECORD = """
window.__spoken = [];
window.speechSynthesis.speak = (u) => window.__spoken.push({text: u.text, lang: u.lang});
window.speechSynthesis.cancel = () => {};
window.__drawn = [];
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, w) {
  const c = this.canvas, shown = c.getBoundingClientRect().width;
  const px = parseFloat(/(\\d+(?:\\.\\d+)?)px/.exec(this.font)[1]);
  window.__drawn.push({text: String(text), css: shown ? px * shown / c.width : null,
                       color: String(this.fillStyle)});
  return fillText.call(this, text, x, y, w);
};
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    chromium_path()
    s = Server(tmp_path_factory.mktemp("family") / "data").start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()


def lan(server) -> str:
    return server.url.replace("127.0.0.1", LAN_NAME)


def new_page(browser, viewport=PHONE, locale="en-GB"):
    context = browser.new_context(viewport=viewport, device_scale_factor=2, is_mobile=True,
                                  has_touch=True, locale=locale)
    context.add_init_script(RECORD)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, errors


def in_view(page, selector: str) -> bool:
    return page.evaluate("""(sel) => { const e = document.querySelector(sel);
        if (!e) return false; const r = e.getBoundingClientRect();
        return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }""", selector)


def check_layout(page, step: str) -> None:
    """Whose turn and the countdown in view wherever the page is scrolled; on the table
    screen, the picture and its valid / not valid line on the first screen."""
    for sel in ("#turn-player", "#countdown"):
        assert in_view(page, sel), f"{step}: {sel} is out of view"
    # (A verdict the player opened with a tap may push the picture down: folded, it fits.)
    if page.locator("#screen-play").is_visible() and \
            not page.evaluate("() => document.querySelector('#verdict').open"):
        page.evaluate("() => scrollTo(0, 0)")
        for sel in ("#stage", "#table-line"):
            assert in_view(page, sel), f"{step}: {sel} is not on the first screen"


def font_px(page, selector: str) -> float:
    return page.evaluate("(s) => parseFloat(getComputedStyle(document.querySelector(s))"
                         ".fontSize)", selector)


def spoken(page) -> list[dict]:
    return page.evaluate("() => window.__spoken")


def create_game(page, server, seconds=30):
    from playwright.sync_api import expect

    page.goto(f"{lan(server)}/?t={server.table_token}")
    expect(page.locator("#screen-new")).to_be_visible()
    names = page.locator("#players .player")
    names.nth(0).fill("Ann")
    names.nth(1).fill("Ben")
    page.locator("#timer-seconds").fill(str(seconds))
    page.click("#create-game")
    expect(page.locator("#screen-start")).to_be_visible()
    page.select_option("#starter", "Ann")
    page.click("#start-round")
    expect(page.locator("#screen-play")).to_be_visible()


def play_a_game(page, server, tmp_path, *, screens=None):
    """Ann's valid first meld, Ben's pass, Ann's wrong table, Ben goes out during his
    running turn: the racks are counted. `screens(name)` is called on every screen."""
    from playwright.sync_api import expect

    seen = screens or (lambda name: None)
    before, after = turn_photos()
    create_game(page, server)
    seen("start of the round")
    page.locator("#table-photo").set_input_files(str(before))
    expect(page.locator("#table-line.ok")).to_be_visible(timeout=30_000)
    seen("a valid table")
    page.click("#btn-end")
    expect(page.locator("#turn-player")).to_have_text("Ben")
    expect(page.locator("#verdict .headline.ok")).to_be_visible()
    seen("Ann's legal turn")
    page.click("#btn-end")  # Ben lays nothing: a pass
    expect(page.locator("#turn-player")).to_have_text("Ann")
    expect(page.locator("#verdict .headline.pass")).to_be_visible()
    seen("Ben's pass")
    page.locator("#table-photo").set_input_files(str(after))
    expect(page.locator("#table-line.bad")).to_be_visible(timeout=30_000)
    seen("a wrong table")
    page.click("#btn-end")
    expect(page.locator("#turn-player")).to_have_text("Ben")
    expect(page.locator("#verdict .headline.bad")).to_be_visible()
    page.locator("#verdict summary").click()
    expect(page.locator("#verdict .penalty")).to_be_visible()
    seen("Ann's wrong turn, opened")
    page.click("#btn-round-over")
    expect(page.locator("#screen-roundend")).to_be_visible()
    page.select_option("#re-winner", "Ben")
    rack = page.locator(".rack[data-player=Ann]")
    beside = tmp_path / "rack_beside.jpg"  # five tiles lying beside and behind the rack
    cv2.imwrite(str(beside), rack_with_tiles_beside()[0])
    rack.locator(".rack-photo").set_input_files(str(beside))
    expect(rack.locator(".rack-warnings")).to_be_visible(timeout=30_000)
    seen("the rack photo")
    rack.locator(".rack-ok").check()
    page.click("#btn-count-round")
    expect(page.locator("#screen-sheet")).to_be_visible()
    seen("the score sheet")
    page.click("[data-tab=history]")
    expect(page.locator("#history details.turn")).to_have_count(3)
    page.evaluate("() => document.querySelectorAll('#history details').forEach(d => d.open = true)")
    seen("the history")
    page.click("[data-tab=info]")
    expect(page.locator("#info .share")).to_have_count(3)
    seen("the game tab")


def test_a_whole_game_at_phone_size(server, browser, tmp_path):
    from playwright.sync_api import expect

    page, errors = new_page(browser)
    sizes_checked = []

    def screens(step):
        if page.locator("#turn-banner").is_visible():
            check_layout(page, step)
        if step == "start of the round":
            # A 30 s turn starts white, not amber: the warning goes by the share left.
            assert "warn" not in page.locator("#countdown").get_attribute("class")
            assert float(page.locator("#countdown").get_attribute("data-share")) > 0.8
        if step in ("a valid table", "Ann's wrong turn, opened"):
            page.screenshot(path=str(tmp_path / f"{step[:5]}.png"))
        if step == "Ann's wrong turn, opened":
            for sel, px in SIZES.items():
                assert font_px(page, sel) >= px, (sel, font_px(page, sel))
            drawn = [d for d in page.evaluate("() => window.__drawn") if d["css"]]
            tile_labels = [d["css"] for d in drawn if re.fullmatch(r"[KRBOJ]\d*(=.*)?\??", d["text"])]
            set_labels = [d["css"] for d in drawn if d["text"] not in ("back",)
                          and not re.fullmatch(r"[KRBOJ]\d*(=.*)?\??", d["text"])]
            assert tile_labels and min(tile_labels) >= OVERLAY["tile"] - 0.5, tile_labels[:5]
            assert set_labels and min(set_labels) >= OVERLAY["set"] - 0.5, set_labels[:5]
            sizes_checked.append(True)
            # "End turn" marks what goes back on the judged photo, as a timeout does.
            assert page.evaluate("() => window.rummikub.state.verdict.penalty.tiles_back"
                                 ".length") >= 5
            pixels = page.evaluate("""(rgb) => { const c = document.querySelector('#overlay');
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0; for (let i = 0; i < d.length; i += 4)
                  if (d[i+3] > 200 && Math.abs(d[i]-rgb[0]) < 30 && Math.abs(d[i+1]-rgb[1]) < 30
                      && Math.abs(d[i+2]-rgb[2]) < 30) n++; return n; }""", MAGENTA)
            assert pixels > 200, "the tiles going back are not marked on the picture"
            # The penalty is said once, in its box.
            text = page.locator("#verdict").inner_text()
            assert text.count("Back to the rack") == 1 and text.count("Draw from the pool") == 1
        if step == "Ben's pass":
            verdict = page.locator("#verdict")
            expect(verdict.locator(".headline")).to_have_text("Ben passes and draws 1 tile")
            assert "illegal" not in verdict.get_attribute("class")
            assert "not a legal" not in verdict.inner_text().lower()
        if step == "the rack photo":
            warnings = page.locator(".rack[data-player=Ann] .rack-warnings")
            expect(warnings).to_contain_text("5 tiles lie off the rack: not counted")
            # Each tile's reading is drawn on the rack photo.
            drawn = page.evaluate("() => window.__drawn.filter(d => d.css).length")
            assert drawn >= 10

    play_a_game(page, server, tmp_path, screens=screens)
    assert sizes_checked
    said = spoken(page)
    heads = ["Ann: good turn", "Ben passes and draws 1 tile", "Ann: not a legal turn"]
    for head in heads:
        assert sum(u["text"].startswith(head) for u in said) == 1, (head, said)
    assert {u["lang"] for u in said} == {"en-GB"}
    # Tiles are spoken as words, never as codes.
    wrong = next(u["text"] for u in said if u["text"].startswith("Ann: not a legal turn"))
    assert "Take " in wrong and not re.search(r"\b[KRBO]\d{1,2}\b", wrong), wrong
    assert not errors, errors


def test_going_out_during_a_running_turn_costs_no_penalty(server, browser):
    from playwright.sync_api import expect

    page, errors = new_page(browser)
    create_game(page, server, seconds=30)
    game = page.evaluate("() => ({id: window.rummikub.state.game.id,"
                         " token: window.rummikub.api.token})")
    # A second phone that has not yet heard of it (its polls answered with the old game).
    other, other_errors = new_page(browser)
    other.goto(f"{lan(server)}/?g={game['id']}&token={game['token']}")
    expect(other.locator("#btn-pause")).to_be_visible()
    stale = api(server, "GET", f"/api/games/{game['id']}", game["token"])
    other.route(lambda url: url.endswith(f"/api/games/{game['id']}"),
                lambda route: route.fulfill(json=stale) if route.request.method == "GET"
                else route.continue_())
    page.click("#btn-round-over")  # Ann laid her last tile: the racks are counted
    expect(page.locator("#screen-roundend")).to_be_visible()
    # Its late press is refused by the server and said calmly at the top of its screen.
    other.click("#btn-pause")
    expect(other.locator("#notice")).to_contain_text("the racks are being counted")
    assert in_view(other, "#notice")
    other.unroute_all()
    expect(other.locator("#screen-roundend")).to_be_visible()  # it counts the racks too
    assert not other_errors, other_errors
    view = api(server, "GET", f"/api/games/{game['id']}", game["token"])
    assert view["round"]["counting"] and view["round"]["turn"]["paused"]
    left = view["round"]["turn"]["remaining_s"]
    # Counting takes longer than the time that was left: still no timeout, no next turn.
    page.wait_for_timeout((left + 2) * 1000)
    view = api(server, "GET", f"/api/games/{game['id']}", game["token"])
    history = api(server, "GET", f"/api/games/{game['id']}/history", game["token"])
    assert history["turns"] == [] and view["round"]["turn"]["player"] == "Ann"
    check_layout(page, "counting the racks")
    page.click("#btn-back-play")
    expect(page.locator("#screen-play")).to_be_visible()
    expect(page.locator("#countdown")).not_to_contain_text("⏸")
    assert not errors, errors


# English words that may stand in any language: names and codes.
ALLOWED = {"Rummikub", "CSV", "QR", "R5 J K13", "rummikub watch", "rummikub serve", "https"}


def english_phrases(code: str) -> set[str]:
    """Literal bits (two words or more) of English catalogue values that the language's own
    catalogue does not also hold."""
    english = json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8"))
    other = (STATIC / "i18n" / f"{code}.json").read_text(encoding="utf-8")
    out = set()
    for value in english.values():
        for text in (value.values() if isinstance(value, dict) else [value]):
            for bit in re.split(r"\{\w+\}|<[^>]+>", text):
                bit = bit.strip(" :.,;·()!?\"")
                if len(bit.split()) >= 2 and bit not in other and bit not in ALLOWED:
                    out.add(bit)
    return out


@pytest.mark.parametrize(("locale", "code", "voice"), [("nl-NL", "nl", "nl-NL"),
                                                       ("fr-FR", "fr", "fr-FR")])
def test_a_whole_game_in_dutch_and_in_french_shows_no_english(server, browser, tmp_path,
                                                              locale, code, voice):
    page, errors = new_page(browser, locale=locale)
    phrases = english_phrases(code)
    assert len(phrases) > 200
    found = {}

    def screens(step):
        text = page.evaluate("() => document.body.innerText")
        hits = sorted(p for p in phrases if p in text)
        if hits:
            found[step] = hits

    play_a_game(page, server, tmp_path, screens=screens)
    assert found == {}, found
    said = spoken(page)
    assert said and {u["lang"] for u in said} == {voice}
    assert not any(p in u["text"] for u in said for p in phrases), said
    assert not errors, errors


def test_a_second_phone_joins_the_running_game_from_the_printed_link(server, browser):
    from playwright.sync_api import expect

    game = api(server, "POST", "/api/games", server.table_token,
               {"players": ["Cas", "Dee"], "timer": {"enabled": True, "seconds": 120}})
    api(server, "POST", f"/api/games/{game['id']}/rounds", game["token"], {"starter": "Dee"})
    page, errors = new_page(browser, viewport=LAPTOP)
    page.goto(f"{lan(server)}/?t={server.table_token}")  # the printed link / QR code
    join = page.locator(f"#running-games [data-join='{game['id']}']")
    expect(join).to_contain_text("Cas, Dee")
    join.click()
    expect(page.locator("#turn-player")).to_have_text("Dee")
    check_layout(page, "joined at 1366 x 768")
    # The language is switched in the Game tab and kept on this phone.
    page.click("[data-tab=info]")
    page.select_option("#language", "de")
    expect(page.locator("[data-tab=info]")).to_have_text("Spiel")
    expect(page.locator("#turn-label")).to_contain_text("Runde 1 · Zug 1")
    page.reload()
    expect(page.locator("[data-tab=play]")).to_have_text("Tisch")
    page.click("[data-tab=info]")
    page.select_option("#language", "en")
    # The Game tab: every link with a QR code and a copy button, none cut off.
    page.click("[data-tab=info]")
    shares = page.locator("#info .share")
    expect(shares).to_have_count(3)
    for i in range(3):
        share = shares.nth(i)
        expect(share.locator(".qr")).to_be_visible()
        expect(share.locator("[data-copy]")).to_be_visible()
        assert share.locator("code").evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    # A spectator's Game tab offers neither the playing link nor the webcam command.
    watcher, _ = new_page(browser)
    watcher.goto(f"{lan(server)}/?g={game['id']}&token={game['watch_token']}")
    expect(watcher.locator("#turn-player")).to_have_text("Dee")
    watcher.click("[data-tab=info]")
    expect(watcher.locator("#info .share")).to_have_count(1)
    assert game["token"] not in watcher.locator("#info").inner_html()
    assert not errors, errors


def _ann_rack_photo(server, browser, photo):
    """(page, page errors, Ann's rack card, the server's reading) once Ann's rack `photo` is
    sent at round end (Ben went out) and its count shown."""
    from playwright.sync_api import expect

    from tests.page_helpers import untimed_round

    page, errors = new_page(browser)
    untimed_round(page, server)
    page.click("#btn-round-over")
    page.select_option("#re-winner", "Ben")
    card = page.locator(".rack[data-player=Ann]")
    with page.expect_response(lambda r: "/racks" in r.url and r.request.method == "POST") as got:
        card.locator(".rack-photo").set_input_files(str(photo))
    reading = got.value.json()
    expect(card.locator(".rack-tiles .rack-total")).to_be_visible(timeout=60_000)
    return page, errors, card, reading


def test_a_rack_photo_taken_upright_is_shown_from_its_tiles(server, browser, tmp_path):
    # a phone held upright: the stand in a band across a tall photo, table above and below.
    # The card shows the part its tiles lie in, every reading inside the view, its labels
    # as large as on a photo shown whole.
    rack = cv2.imread(str(Path(__file__).resolve().parents[1] / "sample_images" /
                          "rack_marble.jpg"))
    pad = (2200 - rack.shape[0]) // 2
    upright = cv2.copyMakeBorder(rack, pad, pad, 0, 0, cv2.BORDER_REPLICATE)  # 1000 x 2200
    photo = tmp_path / "rack_upright.jpg"
    cv2.imwrite(str(photo), upright)
    page, _errors, card, reading = _ann_rack_photo(server, browser, photo)
    marks = [m for m in reading["marks"]]
    assert marks and reading["height"] == 2200
    view = card.locator(".rack-view").bounding_box()
    canvas = card.locator(".rack-view canvas").bounding_box()
    # zoomed: the view is much wider than the whole tall photo would be shown
    assert view["width"] / view["height"] > 2 * 1000 / 2200
    assert canvas["height"] > 1.5 * view["height"]
    sx, sy = canvas["width"] / 1000, canvas["height"] / 2200
    for m in marks:
        for x, y in m["corners"]:
            assert view["x"] - 1 <= canvas["x"] + x * sx <= view["x"] + view["width"] + 1
            assert view["y"] - 1 <= canvas["y"] + y * sy <= view["y"] + view["height"] + 1
    drawn = [d["css"] for d in page.evaluate("() => window.__drawn") if d["css"]]
    assert drawn and min(drawn) >= OVERLAY["tile"] - 0.5, drawn[:5]


def test_a_rack_photos_tiles_lying_by_are_greyed_on_the_card(server, browser, tmp_path):
    # white 720,002 (16 MP): 13 tiles on the stand, 6 lying by. Every tile is drawn with
    # its reading; those lying off the rack in grey, struck through, labelled after the
    # counted ones, without a "?" (they are not counted, nothing to check).
    from bench.eval_white_racks import render

    photo = tmp_path / "white_720002.jpg"
    photo.write_bytes(render(720_002, "rack")[2])
    page, errors, _card, reading = _ann_rack_photo(server, browser, photo)
    off = [m["code"] for m in reading["marks"] if m["off_rack"]]
    kept = [m["code"] for m in reading["marks"] if not m["off_rack"]]
    assert len(off) == 6 and len(kept) == 13
    labels = [d for d in page.evaluate("() => window.__drawn") if d["css"]
              and re.fullmatch(r"[KRBOJ]\d*\??", d["text"])]
    grey = [d["text"] for d in labels if d["color"] == "#a9a9a9"]
    white = [d["text"] for d in labels if d["color"] in ("#ffffff", "#ffc23d")]
    # (labels that would overlap fold into dots: not every tile gets one at 412 px)
    assert len(grey) >= 3 and all(c in off for c in grey), (grey, off)
    assert white and all(c.rstrip("?") in kept for c in white), (white, kept)
    assert not any(c.endswith("?") for c in grey)
    # counted first: no grey label before the last counted one
    order = [d["color"] == "#a9a9a9" for d in labels]
    assert order == sorted(order), order
    assert not errors, errors


def test_a_tick_given_after_typing_a_racks_codes_stays(server, browser):
    # Tapping the tick box blurs the codes field, which says "change" again: the page
    # asks nothing more, and the tick (and the count button it enables) stays.
    from playwright.sync_api import expect

    from tests.page_helpers import untimed_round

    page, errors = new_page(browser)
    untimed_round(page, server)
    page.click("#btn-round-over")
    page.select_option("#re-winner", "Ann")
    card = page.locator(".rack[data-player=Ben]")
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/racks" in r.url else None)
    card.locator(".rack-codes").fill("R5 J K13")
    card.locator(".rack-codes").dispatch_event("change")
    expect(card.locator(".rack-total")).to_have_text("43 points")
    card.locator(".rack-ok").check()
    page.wait_for_timeout(1500)  # a second count, were one asked, would be back by now
    expect(card.locator(".rack-ok")).to_be_checked()
    expect(page.locator("#btn-count-round")).to_be_enabled()
    assert len(asked) == 1, asked
    assert not errors, errors
