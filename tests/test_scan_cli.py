"""`rummikub scan` through the real console script (a subprocess, as a user runs it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.recognition.settings import MODELS_DIR, REPO_ROOT

SCRIPT = REPO_ROOT / ".venv" / "bin" / "rummikub"
if not SCRIPT.exists():
    SCRIPT = Path(shutil.which("rummikub") or SCRIPT)
SAMPLES = sorted(p for p in (REPO_ROOT / "sample_images").glob("*") if p.suffix.lower() in
                 (".jpg", ".jpeg", ".png"))
HAVE_MODELS = all((MODELS_DIR / name).is_file() for name in ("detector.onnx", "classifier.onnx"))

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")
needs_models = pytest.mark.skipif(not HAVE_MODELS, reason=f"no models in {MODELS_DIR}")


def scan(*args, env=None, timeout=300):
    return subprocess.run([str(SCRIPT), "scan", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO_ROOT, env={**os.environ, **(env or {})})


def signed_area(corners) -> float:
    q = np.asarray(corners, np.float64)
    x, y = q[:, 0], q[:, 1]
    return float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)) / 2


def check_photo_object(obj: dict) -> None:
    assert {"photo", "width", "height", "tiles", "warnings"} <= set(obj)
    assert isinstance(obj["width"], int) and isinstance(obj["height"], int)
    for i, tile in enumerate(obj["tiles"]):
        assert tile["id"] == i
        assert {"color", "number", "joker", "corners", "confidence"} <= set(tile)
        if tile["joker"]:
            assert tile["color"] is None and tile["number"] is None
        else:
            assert tile["color"] in {"black", "red", "blue", "orange", "green"}
            assert 1 <= tile["number"] <= 13
        assert len(tile["corners"]) == 4 and all(len(c) == 2 for c in tile["corners"])
        assert signed_area(tile["corners"]) > 0, "corners must run clockwise"
        assert 0.0 <= tile["confidence"] <= 1.0
    if "sets" in obj:
        ids = [i for s in obj["sets"] for i in (s["tiles"] if isinstance(s, dict) else s)]
        assert set(ids) | set(obj.get("loose", [])) <= set(range(len(obj["tiles"])))


def test_models_missing_is_one_line(tmp_path):
    photo = tmp_path / "grey.jpg"
    cv2.imwrite(str(photo), np.full((60, 80, 3), 128, np.uint8))
    result = scan(photo, "--json", env={"RUMMIKUB_MODELS": str(tmp_path / "none")})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "model" in lines[0]
    assert result.stdout == ""


@needs_models
def test_scan_json_corrupt_and_empty(tmp_path):
    good = SAMPLES[0] if SAMPLES else None
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8\xff\xe0 this is not really a jpeg")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    text = tmp_path / "notes.jpg"
    text.write_text("hello")
    table = tmp_path / "table.png"
    wood = np.zeros((750, 1000, 3), np.uint8)
    wood[:] = (40, 70, 110)
    cv2.imwrite(str(table), cv2.GaussianBlur(wood, (5, 5), 0))
    photos = [p for p in (good, corrupt, tmp_path / "missing.jpg", empty, text, table) if p]
    result = scan(*photos, "--json", "--annotate", tmp_path / "annotated")
    assert result.returncode == 2
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 4, result.stderr
    for name, line in zip(("corrupt.jpg", "missing.jpg", "empty.jpg", "notes.jpg"), errors,
                          strict=True):
        assert name in line
    out = json.loads(result.stdout)
    assert [o["photo"] for o in out] == [str(p) for p in photos]
    for obj in out:
        if "error" not in obj:
            check_photo_object(obj)
    assert out[-1]["tiles"] == [] and "error" not in out[-1]
    if good:
        assert out[0]["tiles"], "the sample photo has tiles"
        assert (tmp_path / "annotated" / f"{good.stem}.jpg").is_file()


@needs_models
@pytest.mark.skipif(not SAMPLES, reason="no sample_images/")
def test_scan_samples_summary():
    result = scan(*SAMPLES[:3])
    # 0 when every table is valid, 1 when one is not: the sample tables are judged as read.
    invalid = result.stdout.count("table valid: no")
    assert result.returncode == (1 if invalid else 0), result.stderr
    for path in SAMPLES[:3]:
        assert str(path) in result.stdout
    assert "tiles" in result.stdout


@needs_models
def test_scan_real_photos(real_photos_dir):
    images = sorted((real_photos_dir / "valid" / "images").glob("*.jpg"))
    chosen = [p for p in images if p.name.startswith(("rummy-36", "rummy3-", "rummyBackground"))]
    chosen = chosen[:1] + [p for p in chosen if "rummy3-" in p.name][:1] + \
        [p for p in chosen if "rummyBackground" in p.name][:1]
    result = scan(*chosen, "--json")
    out = json.loads(result.stdout)
    assert result.returncode == (0 if all(o["table_valid"] for o in out) else 1), result.stderr
    assert len(out) == len(chosen)
    for obj, path in zip(out, chosen, strict=True):
        check_photo_object(obj)
        image = cv2.imread(str(path))
        assert (obj["width"], obj["height"]) == (image.shape[1], image.shape[0])
        if "rummyBackground" in path.name:
            assert obj["tiles"] == []
        else:
            assert obj["tiles"]


@needs_models
def test_scan_names_the_tiles_the_photos_edge_cuts():
    # The sample table is rendered with sets running off the photo (R4 at the top edge is
    # cut through, its corner 13 px outside): the reading says which tiles touch the edge.
    result = scan(REPO_ROOT / "sample_images" / "table_runs_groups.jpg", "--json")
    obj = json.loads(result.stdout)[0]
    edge = obj["edge_tiles"]
    assert len(edge) >= 8
    for tile in obj["tiles"]:
        xs = [x for x, _y in tile["corners"]]
        ys = [y for _x, y in tile["corners"]]
        touches = min(xs) <= 0 or min(ys) <= 0 or max(xs) >= 999 or max(ys) >= 749
        assert touches == (tile["id"] in edge)
    assert any(f"{len(edge)} tile(s) at the photo's edge" in w for w in obj["warnings"])
    assert "at the photo's edge" in scan(REPO_ROOT / "sample_images" / "table_runs_groups.jpg"
                                         ).stdout
