"""The overlay's labels at phone width (issue #21): real `rummikub serve`, Debian's chromium
through Playwright, photo mode. At 412 x 915 the tiles of the turn photos are ~22 CSS px
wide, narrower than a 14 px label ("O3 K3 B3" ran into each other): no two labels drawn on
the picture may overlap, none is drawn under the legibility floor, and a tile whose label
had no room shows its reading on a tap."""

from __future__ import annotations

import pytest

from tests.page_helpers import Server, chromium_path, launch, turn_photos, untimed_round

PHONE = {"width": 412, "height": 915}
LAPTOP = {"width": 1366, "height": 768}
TILE_FLOOR = 14  # CSS px (docs/decisions/legibility.md)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    chromium_path()
    s = Server(tmp_path_factory.mktemp("overlay") / "data").start()
    yield s
    s.stop()


def _photographed(browser, server, viewport, photo):
    """A page at `viewport` showing the reading of `photo` in photo mode."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=viewport, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    untimed_round(page, server)
    page.locator("#table-photo").set_input_files(str(photo))
    expect(page.locator("#table-line")).not_to_be_empty(timeout=30_000)
    page.wait_for_function("() => document.querySelector('#photo').complete")
    page.wait_for_function("() => (window.rummikub.overlay.labelBoxes || []).length > 0")
    return context, page, errors


def _labels(page) -> dict:
    """The overlay's label boxes in CSS px, the folded tiles, and the tiles read."""
    return page.evaluate("""() => { const o = window.rummikub.overlay;
        const c = document.querySelector('#overlay'), s = c.getBoundingClientRect().width / c.width;
        return {boxes: o.labelBoxes.map(l => ({...l, box: l.box.map(v => v * s)})),
                folded: o.folded.slice(), tiles: window.rummikub.state.reading.tiles.length}; }""")


def _overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    pairs = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            x0, y0, x1, y1 = a["box"]
            u0, v0, u1, v1 = b["box"]
            if x0 < u1 and u0 < x1 and y0 < v1 and v0 < y1:
                pairs.append((a["text"], b["text"]))
    return pairs


@pytest.mark.parametrize("which", ["before", "after"])
def test_no_two_labels_overlap_at_phone_width(server, which):
    from playwright.sync_api import expect, sync_playwright

    photo = dict(zip(("before", "after"), turn_photos(), strict=True))[which]
    with sync_playwright() as pw:
        browser = launch(pw)
        context, page, errors = _photographed(browser, server, PHONE, photo)
        got = _labels(page)
        tiles = [b for b in got["boxes"] if b["kind"] == "tile"]
        assert _overlapping(got["boxes"]) == []
        # every tile is labelled or folded, once
        assert len(tiles) + len(got["folded"]) == got["tiles"]
        # no label under the floor: a 14 px label's backing is 1.5 x 14 px high
        assert min(b["box"][3] - b["box"][1] for b in tiles) >= 1.5 * TILE_FLOOR - 0.5
        # A folded tile shows its reading on a tap: the correction dialog says what was read.
        if got["folded"]:
            tile = page.evaluate("""(id) => { const r = window.rummikub.state.reading;
                const t = r.tiles.find(t => t.id === id);
                const box = document.querySelector('#overlay').getBoundingClientRect();
                const cx = t.corners.reduce((s, q) => s + q[0], 0) / 4 / r.width * box.width;
                const cy = t.corners.reduce((s, q) => s + q[1], 0) / 4 / r.height * box.height;
                return {x: cx, y: cy, color: t.color, number: t.number, joker: !!t.joker}; }""",
                                 got["folded"][0])
            page.locator("#overlay").click(position={"x": tile["x"], "y": tile["y"]})
            expect(page.locator("#correct-dialog")).to_be_visible()
            words = "joker" if tile["joker"] else f"{tile['color']} {tile['number']}"
            expect(page.locator("#correct-was")).to_be_visible()
            expect(page.locator("#correct-code")).to_contain_text(words)
        assert not errors, errors
        context.close()
        browser.close()


def test_labels_fold_at_phone_width_that_fit_on_a_laptop(server):
    # The folding is for small tiles: on a laptop's wider picture nearly every tile has
    # room (there only a tile beside a wide label, "J=K7" or "K10", folds).
    from playwright.sync_api import sync_playwright

    before, _ = turn_photos()
    with sync_playwright() as pw:
        browser = launch(pw)
        phone = _labels(_photographed(browser, server, PHONE, before)[1])
        laptop = _labels(_photographed(browser, server, LAPTOP, before)[1])
        browser.close()
    assert phone["folded"], "at 412 px some labels of the 22 px tiles must fold"
    assert _overlapping(laptop["boxes"]) == []
    assert len(laptop["folded"]) <= 2 < len(phone["folded"]), (laptop["folded"], phone["folded"])


def test_a_wrong_sets_reason_at_the_pictures_edge_is_drawn_whole(server, valid_by_key, tmp_path):
    """rummy-11's "7 7" pair lies at the photo's right edge: its reason ("too short") was
    drawn 40 px from the edge whatever its width, and ran off the picture at phone width."""
    import cv2
    from playwright.sync_api import sync_playwright

    photo = tmp_path / "rummy-11.jpg"
    cv2.imwrite(str(photo), valid_by_key["rummy-11"].read())
    with sync_playwright() as pw:
        browser = launch(pw)
        context, page, errors = _photographed(browser, server, PHONE, photo)
        width = page.evaluate("() => document.querySelector('#overlay').getBoundingClientRect()"
                              ".width")
        sets = [b for b in _labels(page)["boxes"] if b["kind"] == "set"]
        assert sets, "no wrong set's reason drawn"
        for b in sets:
            assert b["box"][0] >= -0.5 and b["box"][2] <= width + 0.5, (b, width)
        assert errors == []
        context.close()
        browser.close()


# A pixel drawn over a wrong set's reason by a tile's outline or a folded tile's dot is
# white or grey; the reason itself is red (its green channel at most 90) on black.
CROSSED = 120


@pytest.mark.parametrize("key", ["rummy-8", "rummy-36"])
def test_no_outline_or_dot_is_drawn_over_a_wrong_sets_reason(server, valid_by_key, key,
                                                              tmp_path):
    """At phone width the folded tiles' dots and the tiles' outlines were drawn after a
    wrong set's reason and crossed its words ("too short" under a row of white dots): the
    reasons are drawn last, and a dot keeps off them."""
    import cv2
    from playwright.sync_api import sync_playwright

    photo = tmp_path / f"{key}.jpg"
    cv2.imwrite(str(photo), valid_by_key[key].read())
    with sync_playwright() as pw:
        browser = launch(pw)
        context, page, errors = _photographed(browser, server, PHONE, photo)
        crossed = page.evaluate("""(floor) => { const o = window.rummikub.overlay;
            const ctx = document.querySelector('#overlay').getContext('2d');
            return o.labelBoxes.filter(l => l.kind === 'set').map(l => {
                // whole pixels inside the backing only
                const [x0, y0] = l.box.slice(0, 2).map(Math.ceil);
                const [x1, y1] = l.box.slice(2).map(Math.floor);
                const d = ctx.getImageData(x0, y0, x1 - x0, y1 - y0).data;
                let n = 0;
                for (let i = 0; i < d.length; i += 4)
                    if (Math.min(d[i], d[i + 1], d[i + 2]) > floor && d[i + 3] > 200) n++;
                return [l.text, n]; }); }""", CROSSED)
        assert crossed, "no wrong set's reason drawn"
        assert [c for c in crossed if c[1] > 0] == [], crossed
        # Nor does a folded tile's dot lie under one, darkening it.
        under = page.evaluate("""() => { const o = window.rummikub.overlay;
            const sets = o.labelBoxes.filter(l => l.kind === 'set').map(l => l.box);
            return o.dots.filter(([x, y, r]) => sets.some(([x0, y0, x1, y1]) =>
                x + r > x0 && x - r < x1 && y + r > y0 && y - r < y1)); }""")
        assert under == []
        assert errors == []
        context.close()
        browser.close()
