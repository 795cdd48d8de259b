"""`make bench` reports every figure as a ratio to a floor measured in the same run."""

from __future__ import annotations

import json

import pytest

from bench.floor import ratio
from bench.vision_bench import per_round_ratio
from vision.recognition.settings import MODELS_DIR

HAVE_MODELS = all((MODELS_DIR / name).is_file() for name in ("detector.onnx", "classifier.onnx"))


def test_a_ratio_is_taken_round_by_round():
    # a slow round slows the floor and the case alike: the ratio holds
    floor = [0.010, 0.030, 0.011]
    case = [0.015, 0.045, 0.0165]
    assert per_round_ratio(case, floor) == pytest.approx(1.5)


def test_ratios_are_written_for_big_and_tiny_figures():
    assert ratio(30.0, 20.0) == "1.50x"
    assert ratio(0.4, 20.0) == "0.0200x"
    assert ratio(0.001, 20.0) == "<0.0001x"
    assert ratio(5.0, None) == "-"


@pytest.mark.skipif(not HAVE_MODELS, reason=f"no models in {MODELS_DIR}")
def test_vision_bench_reports_each_case_against_the_floor(tmp_path, capsys):
    from bench.vision_bench import main

    out = tmp_path / "bench.json"
    assert main(["--runs", "1", "--skip-large", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "floor = JPEG decode + one pass of both models" in printed
    assert "target: a 1000x750 scan <= 1.3x the floor" in printed
    report = json.loads(out.read_text())
    assert report["floor_ms"] > 0
    assert set(report["cases"]) == {"1000x750 read", "1000x750 scan", "1000x750 scan + annotate"}
    for case in report["cases"].values():
        assert case["ratio"] > 0 and case["cpu_ratio"] > 0
    # where the scan's time goes: the read's own steps (the detector's resize among them),
    # then what the scan adds to the read
    steps = report["scan_breakdown"]
    assert "detector input: resize (INTER_AREA) + float planes" in steps
    assert "scan minus read: file, table logic, JSON" in steps
    assert "where the 1000x750 scan's time goes" in printed


def test_the_scan_breakdown_accounts_for_the_whole_read_and_what_the_scan_adds():
    from bench.vision_bench import Case, breakdown

    floor = [0.020, 0.040]  # the second round ran on a machine twice as busy
    read = Case("read", None)
    read.seconds = [0.030, 0.060]
    read.stages = {"decode": [0.002, 0.004], "detect.prepare": [0.004, 0.008],
                   "detect.network": [0.012, 0.024], "classify.network": [0.006, 0.012]}
    scan = Case("scan", None)
    scan.seconds = [0.036, 0.072]
    parts = breakdown(read, scan, floor)
    assert parts["detector input: resize (INTER_AREA) + float planes"] == pytest.approx(0.2)
    assert parts["rest of the read (glue between the steps)"] == pytest.approx(0.3)
    assert parts["scan minus read: file, table logic, JSON"] == pytest.approx(0.3)
    # the steps and the rest add up to the read, the read and what it adds to the scan
    assert sum(parts.values()) == pytest.approx(36 / 20)
