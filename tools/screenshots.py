"""Screenshots of the table page for the README, made by the browser the tests use.

    .venv/bin/python tools/screenshots.py [--out docs/screenshots]

Starts `rummikub serve` on 127.0.0.1 with a fresh data folder, drives headless Debian
chromium at a phone's size (dark mode) through one game: the fake camera films a rendered
table (tests/page_helpers.py makes it), a legal initial meld, a second phone whose timer
runs out on an invalid table, the racks, the score sheet, the history, photo mode with a
tile being corrected; and one laptop-sized picture of the table screen. PNGs are reduced
to 256 colours (octree, dithered) so they stay small.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.page_helpers import (  # noqa: E402
    LAN_NAME,
    LAPTOP,
    PHONE,
    SAMPLES,
    Server,
    launch,
    table_video,
    turn_photos,
)


def shrink(path: Path) -> None:
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                           dither=Image.Dither.FLOYDSTEINBERG)
    small.save(path, optimize=True)


def snap(page, out: Path, name: str, *, full: bool = False) -> None:
    path = out / f"{name}.png"
    page.wait_for_timeout(400)  # let the last poll and the overlay settle
    page.screenshot(path=str(path), full_page=full)
    shrink(path)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
          f"{path.stat().st_size // 1024} KB")


def context(browser, server, size=PHONE, camera=False):
    ctx = browser.new_context(viewport=size, device_scale_factor=1, color_scheme="dark",
                              is_mobile=size is PHONE, has_touch=size is PHONE)
    if camera:
        ctx.grant_permissions(["camera"], origin=server.url)
    return ctx


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        tmp = Path(tmp)
        server = Server(tmp / "data").start()
        try:
            before, after = turn_photos()
            video_before = table_video(tmp / "before.y4m", before)
            video_after = table_video(tmp / "after.y4m", after)

            browser = launch(pw, video_before)
            page = context(browser, server, camera=True).new_page()
            page.goto(server.url + "/")
            snap(page, out, "01-join")

            page.goto(server.join_url)
            names = ["Ann", "Ben", "Cas", "Dee"]
            page.click("#add-player")
            page.click("#add-player")
            for i, n in enumerate(names):
                page.locator("#players .player").nth(i).fill(n)
            page.locator("#timer-seconds").fill("30")
            snap(page, out, "02-new-game")
            page.click("#create-game")
            expect(page.locator("#screen-start")).to_be_visible()
            # Four tiles drawn, laid left to right in seating order: R2 R3 R4 R5.
            import cv2

            draw = tmp / "draw.jpg"
            cv2.imwrite(str(draw), cv2.imread(str(SAMPLES / "table_runs_groups.jpg"))[0:200, 690:1000])
            page.locator("#draw-photo").set_input_files(str(draw))
            expect(page.locator("#draw-result .message")).to_contain_text("starts", timeout=30_000)
            snap(page, out, "03-who-starts")
            page.click("#start-round")
            page.wait_for_function("() => { const r = window.rummikub.state.game.table;"
                                   " return r && r.table_valid; }", timeout=60_000)
            snap(page, out, "04-table-live")
            page.click("#btn-end")
            expect(page.locator("#verdict")).to_be_visible()
            snap(page, out, "05-verdict")
            game = page.evaluate("() => ({id: window.rummikub.state.game.id,"
                                 " token: window.rummikub.api.token})")
            browser.close()

            # A second phone (its camera sees Ann's invalid additions); her time runs out.
            browser = launch(pw, video_after)
            page = context(browser, server, camera=True).new_page()
            page.goto(f"{server.url}/?g={game['id']}&token={game['token']}")
            page.wait_for_function("() => { const r = window.rummikub.state.game.table;"
                                   " return r && !r.table_valid; }", timeout=60_000)
            page.wait_for_function("() => { const s = window.rummikub.state.game.round.turn;"
                                   " return s && s.remaining_s < 8; }", timeout=60_000)
            snap(page, out, "06-last-seconds")
            page.wait_for_function("() => { const v = window.rummikub.state.verdict;"
                                   " return v && v.timed_out; }", timeout=60_000)
            page.wait_for_timeout(1500)
            snap(page, out, "07-timeout-penalty")
            page.locator("#stage").scroll_into_view_if_needed()
            page.evaluate("() => window.scrollBy(0, -60)")
            snap(page, out, "08-tiles-going-back")

            page.click("#btn-round-over")
            page.select_option("#re-winner", "Dee")
            for player, codes in (("Ann", None), ("Ben", "K13 J R4"), ("Cas", "B7 O2")):
                rack = page.locator(f".rack[data-player={player}]")
                if codes is None:
                    rack.locator(".rack-photo").set_input_files(str(SAMPLES / "rack_marble.jpg"))
                else:
                    rack.locator(".rack-codes").fill(codes)
                    rack.locator(".rack-codes").dispatch_event("change")
                expect(rack.locator(".rack-total")).to_be_visible(timeout=30_000)
            page.locator(".rack[data-player=Ann] .rack-ok").check()
            page.locator(".rack[data-player=Ann]").scroll_into_view_if_needed()
            snap(page, out, "09-racks")
            for player in ("Ben", "Cas"):
                page.locator(f".rack[data-player={player}] .rack-ok").check()
            page.click("#btn-count-round")
            expect(page.locator("#screen-sheet")).to_be_visible()
            # A second round, ended at once with typed racks, so the sheet has two columns.
            page.click("#btn-next-round")
            page.click("#start-round")
            expect(page.locator("#screen-play")).to_be_visible()
            page.click("#btn-round-over")
            page.select_option("#re-winner", "Cas")
            for player, codes in (("Ann", "R3 R4 B9"), ("Ben", "O1 K2"), ("Dee", "J K12 K11")):
                rack = page.locator(f".rack[data-player={player}]")
                rack.locator(".rack-codes").fill(codes)
                rack.locator(".rack-codes").dispatch_event("change")
                expect(rack.locator(".rack-total")).to_be_visible()
                rack.locator(".rack-ok").check()
            page.click("#btn-count-round")
            expect(page.locator("#screen-sheet")).to_be_visible()
            snap(page, out, "10-score-sheet")
            page.click("[data-tab=history]")
            page.locator("#history details.turn summary").nth(0).click()
            page.wait_for_timeout(1500)
            snap(page, out, "11-history")
            browser.close()

            # Photo mode: plain http over the LAN; a misread tile tapped for correction.
            browser = launch(pw)
            page = context(browser, server).new_page()
            page.goto(f"http://{LAN_NAME}:{server.port}/?t={server.table_token}")
            page.locator("#players .player").nth(0).fill("Dee")
            page.locator("#players .player").nth(1).fill("Eli")
            page.click("#create-game")
            page.click("#start-round")
            page.locator("#table-photo").set_input_files(str(SAMPLES / "white_table.jpg"))
            expect(page.locator("#table-summary h3")).to_be_visible(timeout=30_000)
            page.locator("#stage").scroll_into_view_if_needed()
            snap(page, out, "12-photo-mode")
            box = page.evaluate("""() => { const r = window.rummikub.state.reading;
                const t = r.tiles.find(t => t.uncertain) || r.tiles[0];
                const b = document.querySelector('#overlay').getBoundingClientRect();
                return {x: t.corners.reduce((s, q) => s + q[0], 0) / 4 / r.width * b.width,
                        y: t.corners.reduce((s, q) => s + q[1], 0) / 4 / r.height * b.height}; }""")
            page.locator("#overlay").click(position=box)
            expect(page.locator("#correct-dialog")).to_be_visible()
            snap(page, out, "13-correct-a-tile")
            browser.close()

            # The laptop: the same game, the table screen beside the picture.
            browser = launch(pw, video_before)
            page = context(browser, server, size=LAPTOP, camera=True).new_page()
            page.goto(f"{server.url}/?g={game['id']}&token={game['token']}")
            page.click("[data-tab=sheet]")
            page.click("#btn-next-round")
            page.click("#start-round")
            page.wait_for_function("() => { const r = window.rummikub.state.game.table;"
                                   " return r && r.table_valid; }", timeout=60_000)
            page.click("#btn-end")
            expect(page.locator("#verdict")).to_be_visible()
            snap(page, out, "14-laptop")
            browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
