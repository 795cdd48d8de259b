"""`rummikub turn / round / start` and `score_photo`, with the photo reader faked.

The commands' own logic (argument handling, matching, scoring, the sheet, JSON) is tested
here without the models; the real photos run end to end in bench/eval_table.py.
"""

from __future__ import annotations

import argparse
import json

import pytest

from app.cli import game, main
from tests.table_helpers import detections_from, row

PHOTOS = {
    "before.jpg": (["R3", "R4", "R5"], row(["R3", "R4", "R5"])),
    "after.jpg": (["R3", "R4", "R5", "K9", "B9", "O9"],
                  row(["R3", "R4", "R5"]) + row(["K9", "B9", "O9"], y=400)),
    "rack_ben.jpg": (["K1", "J", "R12"], row(["K1", "J", "R12"])),
    "rack_cas.jpg": (["B5"], row(["B5"])),
    "rack_dee.jpg": (["O2", "O4"], row(["O2", "O4"])),
    "draw.jpg": (["R7", "K13", "B13", "O2"], [row(["R7"], x=100 + 200 * k)[0] for k in range(4)]),
    "messy.jpg": (["R3", "R4", "R5", "K9", "R9", "K9"],
                  row(["R3", "R4", "R5"]) + row(["K9", "R9", "K9"], y=400)),
    # a rack's two tiers lie about one tile height apart (tiles further off lie beside it)
    "rack_two_rows.jpg": (["K1", "K2", "B7"], row(["K1", "K2"]) + row(["B7"], y=160)),
}


@pytest.fixture(autouse=True)
def fake_reader(monkeypatch):
    def read(self, path, rack=False):
        if path not in PHOTOS:
            raise game._error(f"{path}: no such photo")
        codes, quads = PHOTOS[path]
        return detections_from(codes, quads)

    monkeypatch.setattr(game._Reader, "read", read)


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_turn_json(capsys):
    assert main(["turn", "before.jpg", "after.jpg", "--json"]) == 0
    out = _json(capsys)
    assert out["legal"] and [p["code"] for p in out["played"]] == ["K9", "B9", "O9"]
    assert out["left_table"] == [] and out["joker_missing"] is False
    assert out["after"]["table_valid"] and len(out["after"]["sets"]) == 2


def test_turn_first_meld_too_small_text(capsys):
    assert main(["turn", "before.jpg", "after.jpg", "--first-meld"]) == 1
    text = capsys.readouterr().out
    assert "NOT LEGAL" in text and "initial meld total: 27" in text
    assert "table sets touched: none" in text


def test_turn_first_meld_json(capsys):
    status = main(["turn", "before.jpg", "after.jpg", "--first-meld", "--json"])
    out = _json(capsys)
    assert out["initial_meld_total"] == 27 and not out["legal"] and status == 1
    assert out["table_sets_touched"] == []


def test_score_photo_json(capsys):
    args = argparse.Namespace(photo="rack_ben.jpg", edition=None, json=True, models=None)
    assert game.score_photo(args) == 0
    out = _json(capsys)
    assert out["photo"] == "rack_ben.jpg" and out["total"] == 1 + 25 + 12
    assert [t["joker"] for t in out["tiles"]] == [False, True, False]
    args = argparse.Namespace(photo="rack_ben.jpg", edition="travel-tin", json=True, models=None)
    game.score_photo(args)
    assert _json(capsys)["total"] == 1 + 30 + 12


def test_round_with_sheet(tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    argv = ["round", "rack_ben.jpg", "rack_cas.jpg", "rack_dee.jpg", "--players",
            "Ann,Ben,Cas,Dee", "--winner", "Ann", "--sheet", str(sheet), "--json"]
    assert main(argv) == 0
    out = _json(capsys)
    scores = {p["name"]: p["score"] for p in out["players"]}
    assert scores == {"Ann": 38 + 5 + 6, "Ben": -38, "Cas": -5, "Dee": -6}
    assert main(argv) == 0
    out = _json(capsys)
    assert out["totals"]["Ann"] == 98 and out["leader"] == "Ann"
    assert sheet.read_text().startswith("player,round 1,round 2,total")


def test_a_sheet_that_cannot_be_written_is_one_clear_error(tmp_path, capsys):
    argv = ["round", "-", "rack_cas.jpg", "--players", "Ann,Cas", "--winner", "Ann",
            "--sheet", str(tmp_path / "no such folder" / "sheet.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the score sheet" in err


def test_a_failed_write_leaves_the_old_sheet_whole(tmp_path, capsys, monkeypatch):
    sheet = tmp_path / "sheet.csv"
    argv = ["round", "-", "rack_cas.jpg", "--players", "Ann,Cas", "--winner", "Ann",
            "--sheet", str(sheet)]
    assert main(argv) == 0
    before = sheet.read_text()

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", disk_full)
    assert main(argv) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert sheet.read_text() == before  # round 1 intact, no half-written round 2
    # No temporary file left; the lock file beside the sheet stays for the next writer.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sheet.csv.lock", "sheet.csv"]


def test_round_text_and_errors(capsys):
    assert main(["round", "-", "rack_cas.jpg", "--players", "Ann,Cas", "--winner", "Ann"]) == 0
    assert "Ann" in capsys.readouterr().out
    assert main(["round", "rack_cas.jpg", "--players", "Ann,Cas,Dee", "--winner", "Ann"]) == 2
    assert main(["round", "rack_cas.jpg", "rack_dee.jpg", "--players", "Ann,Cas",
                 "--winner", "Zed"]) == 2
    assert main(["round", "rack_cas.jpg", "rack_dee.jpg", "--players", "Cas,Dee"]) == 0
    assert "winner Cas" in capsys.readouterr().out  # pool empty: the lowest rack wins


def test_start(capsys):
    assert main(["start", "draw.jpg", "--players", "Ann,Ben,Cas,Dee", "--json"]) == 0
    out = _json(capsys)
    assert out["starter"] is None and out["tied"] == ["Ben", "Cas"]
    assert main(["start", "draw.jpg", "--players", "Ann,Ben"]) == 2
    assert "2 player" in capsys.readouterr().err


def test_turn_json_has_the_compact_layout_of_scan_json(capsys):
    assert main(["turn", "before.jpg", "after.jpg", "--json"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    # One tile per line, as `scan --json` writes them, not one key per line.
    assert any(line.strip().startswith('{"id": 0, "color": "red"') for line in lines)
    assert len(lines) < 60
    assert json.loads(text)["invalid_before"] == []


def test_the_same_photo_twice_is_one_pass_and_old_invalid_sets_are_not_this_players(capsys):
    assert main(["turn", "messy.jpg", "messy.jpg"]) == 1
    text = capsys.readouterr().out
    assert text.count("draws 1") == 1 and "laid nothing from the rack" in text
    assert "K9 R9 K9) is invalid" not in text
    assert "not this player's: set 2 (K9 R9 K9) was already invalid before this turn" in text


@pytest.fixture
def rack_photo_file(tmp_path, monkeypatch):
    """`score` looks for the file before reading it (the reader itself is faked)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rack_two_rows.jpg").write_bytes(b"")


def test_round_prints_rack_tiles_row_by_row_as_score_does(capsys, rack_photo_file):
    assert main(["round", "-", "rack_two_rows.jpg", "--players", "Ann,Ben", "--winner",
                 "Ann"]) == 0
    text = capsys.readouterr().out
    assert "row 1: K1 K2" in text and "row 2: B7" in text
    assert main(["score", "rack_two_rows.jpg"]) == 0
    text = capsys.readouterr().out
    assert "row 1: K1 K2" in text and "row 2: B7" in text


def test_score_json_says_total_for_a_photo_and_for_codes(capsys, rack_photo_file):
    assert main(["score", "rack_two_rows.jpg", "--json"]) == 0
    photo = _json(capsys)
    assert main(["score", "K1 K2 B7", "--json"]) == 0
    codes = _json(capsys)
    assert photo["total"] == codes["total"] == 10
    assert photo["edition"] == codes["edition"] == "original"


def test_a_sheet_of_other_players_names_them_in_words(tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    assert main(["round", "-", "rack_cas.jpg", "--players", "Ann,Cas", "--winner", "Ann",
                 "--sheet", str(sheet)]) == 0
    capsys.readouterr()
    assert main(["round", "-", "rack_cas.jpg", "--players", "Ann,Ben", "--winner", "Ann",
                 "--sheet", str(sheet)]) == 2
    err = capsys.readouterr().err
    assert "the sheet's players are Ann and Cas: Ben is not on it" in err
    assert "[" not in err and err.count("\n") == 1


def test_turn_and_start_take_the_rule_options(capsys):
    assert main(["turn", "before.jpg", "after.jpg", "--set", "initial_meld_minimum=40",
                 "--first-meld"]) == 1
    assert "minimum 40" in capsys.readouterr().out
    assert main(["start", "draw.jpg", "--players", "Ann,Ben,Cas,Dee", "--edition", "rummy"]) == 0
