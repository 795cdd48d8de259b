"""`rummikub check`, `score` and `arrange`, run through the real console script."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUMMIKUB = Path(sys.executable).parent / "rummikub"


def run(*args):
    if not RUMMIKUB.exists():
        pytest.skip(f"console script not installed at {RUMMIKUB}")
    done = subprocess.run([str(RUMMIKUB), *args], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_check_prints_one_line_per_set_and_exits_0_when_all_are_valid():
    done = run("check", "R12 R13 J", "K5 R5 B5 O5")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("R12 R13 J: valid run") and "J is R11" in lines[0]
    assert lines[1].startswith("K5 R5 B5 O5: valid group") and "20 points" in lines[1]


def test_check_says_why_a_set_is_invalid_and_exits_1():
    done = run("check", "R12 R13 R1", "R1 R2 R3")
    assert done.returncode == 1
    assert "invalid: wraps past 13" in done.stdout.splitlines()[0]


def test_check_json_has_one_object_per_set():
    done = run("check", "--json", "R12 R13 J", "K5 K5 R5")
    assert done.returncode == 1
    sets = json.loads(done.stdout)
    assert sets[0] == {"tiles": ["R12", "R13", "J"], "valid": True, "kind": "run",
                       "reasons": [], "notes": sets[0]["notes"], "jokers": ["R11"], "value": 36}
    assert sets[1]["valid"] is False and sets[1]["kind"] is None
    assert sets[1]["reasons"][0].startswith("duplicate colour in a group")


@pytest.mark.parametrize("bad", ["R12 X13", "R14", "J9"])
def test_unreadable_input_exits_2_with_one_line_naming_the_token(bad):
    done = run("check", bad)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "bad tile code" in done.stderr


def test_check_meld_totals_the_initial_meld():
    done = run("check", "--meld", "R10 R11 R12", "K1 K2 K3")
    assert done.returncode == 0
    assert "initial meld: legal, 39 points" in done.stdout
    done = run("check", "--meld", "K1 K2 K3", "B4 B5 B6")
    assert done.returncode == 1
    assert "initial meld: not legal, 21 points" in done.stdout


def test_check_meld_json():
    meld = json.loads(run("check", "--meld", "--json", "R9 J R11").stdout)
    assert (meld["legal"], meld["total"], meld["sets"][0]["jokers"]) == (True, 30, ["R10"])


def test_check_takes_an_edition_and_setting_overrides():
    assert run("check", "K5 R5 G5").returncode == 1
    assert run("check", "K5 R5 G5", "--edition", "rummy").returncode == 0
    assert run("check", "K5 R5 G5", "--set", "colors=KRBG").returncode == 0
    done = run("check", "K5 R5 B5", "--set", "nonsense=1")
    assert done.returncode == 2 and "unknown setting" in done.stderr


def test_score_a_rack_by_edition():
    done = run("score", "R5 J K13", "--edition", "travel-tin")
    assert done.returncode == 0 and "penalty 48" in done.stdout
    assert "penalty 43" in run("score", "R5 J K13").stdout
    assert json.loads(run("score", "--json", "R5", "K1").stdout)["total"] == 6


def test_score_of_a_corrupt_rack_photo_is_one_line_naming_it(tmp_path):
    photo = tmp_path / "rack.jpg"
    photo.write_bytes(b"\xff\xd8")
    done = run("score", str(photo))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and str(photo) in done.stderr
    assert "Traceback" not in done.stderr


def test_score_of_a_missing_photo_names_it_instead_of_reading_tile_codes(tmp_path):
    done = run("score", str(tmp_path / "no-such-rack.jpg"))
    assert done.returncode == 2 and "no-such-rack.jpg" in done.stderr


def test_arrange_prints_one_set_per_line():
    done = run("arrange", "R1 R2 R3 B7 K7 O7 J")
    assert done.returncode == 0
    assert sorted(done.stdout.splitlines()) == ["K7 B7 O7", "R1 R2 R3 J"]


def test_arrange_says_why_not_and_exits_1():
    done = run("arrange", "K5 R5 B5 O5 J")
    assert done.returncode == 1 and done.stdout.startswith("no arrangement:")
    done = run("arrange", "R1 R2 R3 J J J")
    assert done.returncode == 1 and "3 jokers" in done.stdout


def test_arrange_json():
    result = json.loads(run("arrange", "--json", "R1 R2 R3").stdout)
    assert result["sets"] == [["R1", "R2", "R3"]] and result["warnings"] == []


def test_unknown_edition_exits_2():
    done = run("arrange", "R1 R2 R3", "--edition", "nope")
    assert done.returncode == 2 and "nope" in done.stderr
