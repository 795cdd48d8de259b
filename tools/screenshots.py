"""Screenshots of the table page for docs/screenshots/: a short game on a real server in
headless Debian chromium, at a phone's size (412 x 915) and a laptop's (1366 x 768), in
English and in Dutch.

    python -m tools.screenshots [--out docs/screenshots] [--langs en,nl]

Each PNG is one screen (not the whole scrolled page), kept small: PNG palette-quantised
with Pillow where it is installed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.page_helpers import LAN_NAME, Server, launch, turn_photos  # noqa: E402

SIZES = {"phone": {"width": 412, "height": 915}, "laptop": {"width": 1366, "height": 768}}
LOCALES = {"en": "en-GB", "nl": "nl-NL", "fr": "fr-FR", "de": "de-DE"}


def shrink(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                   dither=Image.Dither.FLOYDSTEINBERG).save(path, optimize=True)


def shoot(browser, server: Server, lang: str, size: str, out: Path) -> list[Path]:
    from playwright.sync_api import expect

    context = browser.new_context(viewport=SIZES[size], device_scale_factor=1, color_scheme="dark",
                                  locale=LOCALES[lang], is_mobile=size == "phone",
                                  has_touch=size == "phone")
    page = context.new_page()
    shots = []

    def snap(name: str) -> None:
        page.evaluate("() => scrollTo(0, 0)")
        page.wait_for_timeout(300)
        path = out / f"{name}-{size}-{lang}.png"
        page.screenshot(path=str(path))
        shrink(path)
        shots.append(path)

    before, after = turn_photos()
    lan = server.url.replace("127.0.0.1", LAN_NAME)
    page.goto(f"{lan}/?t={server.table_token}")
    names = page.locator("#players .player")
    names.nth(0).fill("Ann")
    names.nth(1).fill("Ben")
    snap("new-game")
    page.click("#create-game")
    page.select_option("#starter", "Ann")
    page.click("#start-round")
    page.locator("#table-photo").set_input_files(str(before))
    expect(page.locator("#table-line.ok")).to_be_visible(timeout=60_000)
    page.click("#btn-end")
    expect(page.locator("#verdict .headline.ok")).to_be_visible()
    snap("legal-turn")
    page.click("#btn-end")
    expect(page.locator("#verdict .headline.pass")).to_be_visible()
    page.locator("#table-photo").set_input_files(str(after))
    expect(page.locator("#table-line.bad")).to_be_visible(timeout=60_000)
    snap("wrong-table")
    page.click("#btn-end")
    expect(page.locator("#verdict .headline.bad")).to_be_visible()
    snap("penalty")
    page.locator("#verdict summary").click()
    snap("penalty-open")
    page.click("[data-tab=info]")
    snap("game-tab")
    context.close()
    return shots


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--langs", default="en,nl")
    parser.add_argument("--sizes", default="phone,laptop")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "data").start()
        try:
            with sync_playwright() as pw:
                browser = launch(pw)
                for lang in args.langs.split(","):
                    for size in args.sizes.split(","):
                        for path in shoot(browser, server, lang, size, args.out):
                            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
                browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
