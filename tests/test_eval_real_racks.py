"""`bench.eval_real_racks`: the dataset's real photos of tiles standing on a black rack,
read as `rummikub score` reads them. Every labelled tile there stands on the rack, so
none may be named off and every total is the labels' penalty (train/ rummy4-89 lost its
R4 to `vision.game.footing.unheld` before the look beside a tile's box). The photos taken
otherwise (the bench's variants, 2 minutes) are `make eval`'s; one of them here."""

from __future__ import annotations


def test_every_real_rack_photo_counts_every_stand_tile(real_photos_dir, tile_reader):
    from bench.eval_real_racks import RACK_PHOTOS, evaluate, report

    lines = []
    results = evaluate(log=lines.append, variants=False)
    rows = results["rows"]
    assert len(rows) == sum(len(keys) for keys in RACK_PHOTOS.values()) == 24
    assert [r["key"] for r in rows if r["named_off"] or r["refused"]] == [], lines
    assert [r["key"] for r in rows if r["total"] != r["total_wanted"]] == [], lines
    text = report(results)
    assert "totals right 19 of 19" in text and "totals right 5 of 5" in text
    assert results["summary"]["tiles"] == 181


def test_a_real_rack_brightened_keeps_its_upper_tier(real_photos_dir, tile_reader):
    # train/ rummy4-90 and valid/ rummy4-92 brightened x1.3: the stand's colour learnt under
    # the tiles' feet mixes the rack's lit lip with its shaded ledge, and the ledge under an
    # upper-tier tile lay too far from it (B7, R2 named off) until the stand's own shade
    # counted as the stand (`footing._from_stand`)
    from bench.eval_real_racks import VARIANTS, _read
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split

    photos = {p.key: p for split in ("train", "valid") for p in load_split(split, real_photos_dir)}
    for key in ("rummy4-90", "rummy4-92"):
        photo = photos[key]
        want = rack_penalty([Tile.from_code(t.code) for t in photo.tiles], DEFAULT_RULES)
        row = _read(tile_reader, "", key, "light x1.3", VARIANTS["light x1.3"](photo.read()),
                    None, len(photo.tiles), want, print)
        assert row["refused"] is None and row["named_off"] == 0, row
        assert row["total"] == want


def test_the_hands_line_counts_each_way_a_hand_was_read():
    from bench.eval_real_racks import report

    taken = [{"key": f"k{i}", "split": "train", "variant": "as taken", "tiles": 2,
              "total_wanted": 10, "total": 10, "counted": 2, "right": 2, "named_off": 0,
              "refused": None} for i in range(2)]
    hands = [{"read": "refused", "total_right": None}, {"read": "doubt", "total_right": True},
             {"read": "doubt", "total_right": False}, {"read": "silent", "total_right": False},
             {"read": "silent", "total_right": False}, {"read": "silent", "total_right": True}]
    results = {"rows": taken, "hands": hands}
    text = report(results)
    assert ("a hand painted over the rack (6 of 12 over a tile): refused 1, read with a doubt "
            "said 2 (total right 1), read silently 3 (total right 1, wrong 2)") in text
    assert results["summary"]["hands_silent_wrong"] == 2


def test_a_palm_over_a_real_racks_row_end_is_refused(real_photos_dir, tile_reader):
    # train/ rummy3-3 with the bench's palm over a tile: the hand hides the tiles at a row's
    # end, so it lay past the hull of the tiles left and was only a doubt beside a wrong
    # total; the hull stretched along the rows (`cover.ROWS_REACH`) reaches it
    from bench.eval_real_racks import RACK_PHOTOS, _hands
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == "rummy3-3")
    want = rack_penalty([Tile.from_code(t.code) for t in photo.tiles], DEFAULT_RULES)
    rows = _hands(tile_reader, "train", RACK_PHOTOS["train"].index("rummy3-3"), "rummy3-3",
                  photo.read(), want, print)
    palm = next(r for r in rows if r["kind"] == "palm")
    assert palm["read"] == "refused"


def test_a_real_rack_seen_from_one_side_keeps_its_upper_tier(real_photos_dir, tile_reader):
    # train/ rummy3-16: a rack seen from its right, R7 and R9 at the far left of its upper
    # tier, B13 at its near right. Tilted, darkened or halved, the photo's view (the
    # plane's fit dropped) set the far tiles against the near ones' median box and named
    # the tier off as lying behind (narrower) or flat past the stand's end (across the
    # gap to B13): 21 or 34 for 50, until box sizes in the photo are set as at one place
    # along the rack (`vision.game.tiers.along_scale`)
    from bench.eval_real_racks import VARIANTS, _read
    from referee import DEFAULT_RULES, Tile, rack_penalty
    from training.real_data import load_split

    photo = next(p for p in load_split("train", real_photos_dir) if p.key == "rummy3-16")
    want = rack_penalty([Tile.from_code(t.code) for t in photo.tiles], DEFAULT_RULES)
    assert want == 50
    for variant in ("tilted 4 deg", "tilted 15 deg", "light x0.5", "half size"):
        row = _read(tile_reader, "", "rummy3-16", variant, VARIANTS[variant](photo.read()),
                    None, len(photo.tiles), want, print)
        assert row["refused"] is None and row["named_off"] == 0, (variant, row)
        assert row["total"] == want, (variant, row)
