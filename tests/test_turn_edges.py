"""A turn from two photos whose framing differs: a tile that only one photo shows, at the
edge of what both show, is not counted as played or taken away; it is named for a check.

The real case: the camera turned 2 degrees and shifted between the photos, and the new
edge cut a tile off; `rummikub turn` said that tile was played (or left the table)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from tests.tracker_helpers import bumped

KEY, DEGREES, SHIFT = "rummy2-17", 2.0, (-80, 0)  # the turn cuts K8 at the top left


@pytest.fixture(scope="module")
def turned(real_photos_dir, tmp_path_factory):
    """(photo as taken, the same table with the camera turned) as files, and their tiles."""
    from training.real_data import load_split
    from vision.recognition.pipeline import ModelsMissing, TileReader

    try:
        reader = TileReader.load()
    except ModelsMissing as e:
        pytest.skip(str(e))
    [photo] = [p for p in load_split("valid", real_photos_dir) if p.key == KEY]
    image = photo.read()
    view, m = bumped(image, DEGREES, SHIFT)
    folder = tmp_path_factory.mktemp("turned")
    paths = folder / "taken.png", folder / "turned.png"
    for path, picture in zip(paths, (image, view), strict=True):
        cv2.imwrite(str(path), picture)
    h, w = image.shape[:2]
    taken = reader.read(image)
    q = taken.corners.astype(np.float64) @ m[:, :2].T + m[:, 2]
    cut = [taken.codes[i] for i in range(len(taken))
           if q[i].min() < 0 or q[i, :, 0].max() > w - 1 or q[i, :, 1].max() > h - 1]
    assert cut == ["K8"]  # the scene is what this test says it is
    return paths, (taken, reader.read(view)), (w, h)


def test_without_the_framing_the_edge_tile_is_counted(turned):
    from vision.game.turn import judge_turn

    _paths, (taken, view), _frame = turned
    turn = judge_turn(taken, view)  # photo sizes unknown: no part of the table is trusted less
    assert [turn.before.detections.codes[i] for i in turn.left] == ["K8"]
    turn = judge_turn(view, taken)
    assert [turn.after.detections.codes[i] for i in turn.played] == ["K8"]


@pytest.mark.parametrize("order", ["taken, turned", "turned, taken"])
def test_rummikub_turn_plays_nothing_and_names_the_edge_tile(turned, order, capsys):
    from app.cli import main

    (taken, turned_path), _tiles, _frame = turned
    before, after = (taken, turned_path) if order == "taken, turned" else (turned_path, taken)
    status = main(["turn", str(before), str(after), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["played"] == [] and out["left_table"] == []
    assert status == 1 and out["problems"] == ["laid nothing from the rack: a pass"]
    edge = out["edge_only"]["before"] + out["edge_only"]["after"]
    assert [t["code"] for t in edge] == ["K8"]
    assert any("1 tile at the edge of one photo only: K8" in c for c in out["check"])
    assert {"id": "check.edge", "params": {"count": 1, "tiles": "K8"}} in out["check_ids"]
    # In words, too: the check comes first, under the verdict.
    main(["turn", str(before), str(after)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  CHECK: 1 tile at the edge of one photo only: K8")
    assert "  played: nothing" in lines and "  left the table: nothing" in lines
