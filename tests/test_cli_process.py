"""The `rummikub` process as a shell sees it: pipes, full disks, exit statuses, a score
sheet written by several rounds at once. Run through the real console script."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.recognition.settings import MODELS_DIR, REPO_ROOT

RUMMIKUB = Path(sys.executable).parent / "rummikub"
HAVE_MODELS = all((MODELS_DIR / name).is_file() for name in ("detector.onnx", "classifier.onnx"))
SAMPLE = REPO_ROOT / "sample_images" / "table_runs_groups.jpg"
EDITION_NAMES = "original, travel-tin, rummy, six-player, tournament, world-championship, mso"

pytestmark = pytest.mark.skipif(not RUMMIKUB.exists(), reason="console script not installed")
needs_models = pytest.mark.skipif(not HAVE_MODELS or not SAMPLE.is_file(),
                                  reason="no models or sample photo")


def run(*args, timeout=120, stdout=subprocess.PIPE):
    done = subprocess.run([str(RUMMIKUB), *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=REPO_ROOT)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def one_line(done) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# -- output ---------------------------------------------------------------------------------

def closed_pipe(*args):
    """Run with stdout a pipe whose reader has gone (as `... | head -1` after one line)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([str(RUMMIKUB), *map(str, args)], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO_ROOT)
    finally:
        os.close(write_end)
    return done


def test_a_reader_that_went_away_ends_the_command_quietly():
    done = closed_pipe("check", "R1 R2 R3", "K5 R5 B5")
    assert done.stderr == ""  # no BrokenPipeError traceback, no message
    assert done.returncode == 141  # as a program stopped by SIGPIPE


@needs_models
def test_scan_into_a_closed_pipe_is_quiet():
    done = closed_pipe("scan", SAMPLE, SAMPLE)
    assert done.stderr == "" and done.returncode == 141


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("args", [["check", "R1 R2 R3"], ["arrange", "R1 R2 R3"], ["--help"]])
def test_output_that_cannot_be_written_is_one_line_and_status_2(args):
    with open("/dev/full", "w") as full:
        done = run(*args, stdout=full)
    assert done.returncode == 2
    assert one_line(done).endswith("cannot write the output: No space left on device")


# -- exit statuses: 0 judged valid, 1 judged invalid, 2 bad input -------------------------

@pytest.mark.parametrize(
    ("args", "status"),
    [(["check", "R1 R2 R3"], 0), (["check", "R1 R2 R3", "R1 R2"], 1), (["check", "R1 X2"], 2),
     (["check", "--meld", "R10 R11 R12"], 0), (["check", "--meld", "R1 R2 R3"], 1),
     (["arrange", "R1 R2 R3 K7 B7 O7"], 0), (["arrange", "R1 R2"], 1), (["arrange", "R1 Q"], 2),
     (["score", "R5 J"], 0), (["score", "-"], 0), (["score", "R5 R99"], 2),
     (["round", "-", "-", "--players", "Ann,Ben"], 0),
     (["round", "-", "--players", "Ann,Ben"], 2),
     (["turn", "no-such-before.jpg", "no-such-after.jpg"], 2),
     (["scan", "no-such-photo.jpg"], 2), (["start", "no-such-photo.jpg", "--players", "A,B"], 2)],
)
def test_every_command_follows_one_exit_status_rule(args, status):
    done = run(*args)
    assert done.returncode == status, (done.stdout, done.stderr)
    if status == 2:
        one_line(done)


@needs_models
def test_scan_exits_1_when_a_table_is_not_valid_and_0_when_it_is(tmp_path):
    done = run("scan", "--json", SAMPLE)
    tables = json.loads(done.stdout)
    assert done.returncode == (0 if tables[0]["table_valid"] else 1)
    bare = tmp_path / "bare.png"  # no tiles: an empty table is a valid one
    cv2.imwrite(str(bare), np.full((750, 1000, 3), (40, 70, 110), np.uint8))
    done = run("scan", "--json", bare)
    assert json.loads(done.stdout)[0]["table_valid"] and done.returncode == 0
    done = run("scan", "--json", bare, tmp_path / "missing.jpg")
    assert done.returncode == 2  # an unreadable photo outranks everything


@needs_models
def test_turn_with_one_photo_twice_is_a_pass_said_once():
    done = run("turn", SAMPLE, SAMPLE)
    assert done.returncode == 1  # a pass is not a legal turn: the player draws
    assert done.stdout.count("draws 1") == 1 and "laid nothing" in done.stdout
    assert "is invalid" not in done.stdout  # what was invalid before is not this player's


# -- tile codes -------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["R²", "R①", "R" + "1" * 5000, ""])
@pytest.mark.parametrize("command", ["check", "arrange", "score"])
def test_unreadable_or_empty_tile_codes_are_one_line_and_status_2(command, bad):
    done = run(command, bad)
    assert done.returncode == 2
    line = one_line(done)
    assert line.startswith(f"rummikub {command}: bad tile code") and len(line) < 250


def test_more_tiles_than_any_box_holds_are_refused_at_once():
    start = time.monotonic()
    done = run("arrange", " ".join(["R5 R6 R7"] * 700), timeout=60)
    assert done.returncode == 2 and time.monotonic() - start < 30
    assert "2100 tiles, but a box of the original edition holds 106" in one_line(done)
    done = run("check", *(["R1 R2 R3 R4"] * 30))
    assert done.returncode == 2 and "holds 106" in one_line(done)
    # 120 tiles: the six-player box holds 160, and 104 fit in the original one.
    assert run("check", *(["R1 R2 R3 R4"] * 30), "--edition", "six-player").returncode == 0
    assert run("check", *(["R1 R2 R3 R4"] * 26)).returncode == 0


def test_a_missing_rack_photo_is_named_as_missing():
    done = run("score", "myrackphoto")
    assert done.returncode == 2
    assert "myrackphoto: no such photo file" in one_line(done)


# -- one command line ---------------------------------------------------------------------------

RULE_COMMANDS = [["check", "R1 R2 R3"], ["score", "R5"], ["arrange", "R1 R2 R3"],
                 ["scan", "x.jpg"], ["turn", "x.jpg", "y.jpg"],
                 ["round", "-", "--players", "Ann"], ["start", "x.jpg", "--players", "A"]]


@pytest.mark.parametrize("args", RULE_COMMANDS)
def test_every_command_takes_edition_and_set_with_one_message(args):
    done = run(*args, "--edition", "nope")
    assert done.returncode == 2
    assert one_line(done) == (f"rummikub {args[0]}: --edition: unknown edition 'nope'; known "
                              f"editions: {EDITION_NAMES}")
    done = run(*args, "--set", "nonsense=1")
    assert done.returncode == 2 and "--set nonsense=1: unknown setting" in one_line(done)
    helped = run(args[0], "--help")
    assert EDITION_NAMES.replace(" ", "") in "".join(helped.stdout.split())
    assert "--set NAME=VALUE" in helped.stdout
    assert "exit status:" in helped.stdout


@pytest.mark.parametrize("args", [["check"], ["check", "R1", "--bogus"], [], ["frob"],
                                  ["round", "-", "--players"]])
def test_a_command_line_argparse_cannot_read_is_one_line_and_status_2(args):
    done = run(*args)
    assert done.returncode == 2 and "--help` explains" in one_line(done)


def test_help_explains_tile_letters_exit_statuses_models_and_version():
    text = run("--help").stdout
    for words in ("K black", "R red", "B blue", "O orange", "G green", "J for a joker",
                  "Y is read as O", "exit status:", "RUMMIKUB_MODELS"):
        assert words in text, words
    assert "K black" in run("check", "--help").stdout
    assert "RUMMIKUB_MODELS" in run("scan", "--help").stdout
    start = run("start", "--help").stdout
    assert "one per player, laid left to right" in " ".join(start.split())
    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("rummikub ")


# -- the score sheet ----------------------------------------------------------------------------

def round_argv(sheet) -> list[str]:
    return [str(RUMMIKUB), "round", "-", "-", "--players", "Ann,Ben", "--winner", "Ann",
            "--sheet", str(sheet)]


def test_eight_rounds_recorded_at_the_same_moment_all_land(tmp_path):
    sheet = tmp_path / "sheet.csv"
    procs = [subprocess.Popen(round_argv(sheet), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
             for _ in range(8)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    header = sheet.read_text().splitlines()[0]
    assert header == "player," + ",".join(f"round {n}" for n in range(1, 9)) + ",total"


def test_a_sheet_keeps_its_permissions_and_a_link_stays_a_link(tmp_path):
    target = tmp_path / "real.csv"
    assert subprocess.run(round_argv(target), cwd=REPO_ROOT).returncode == 0
    target.chmod(0o644)
    assert subprocess.run(round_argv(target), cwd=REPO_ROOT).returncode == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    link = tmp_path / "sheet.csv"
    link.symlink_to(target)
    assert subprocess.run(round_argv(link), cwd=REPO_ROOT).returncode == 0
    assert link.is_symlink() and "round 3" in target.read_text()


def test_a_killed_writer_leaves_no_temporary_file_behind(tmp_path):
    sheet = tmp_path / "sheet.csv"
    # A writer killed between writing its temporary file and putting it in place.
    child = textwrap.dedent(f"""
        import os, sys, time
        from app.cli import main
        os.replace = lambda *a: (print("written", flush=True), time.sleep(600))
        main(["round", "-", "-", "--players", "Ann,Ben", "--winner", "Ann",
              "--sheet", {str(sheet)!r}])
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True,
                            cwd=REPO_ROOT)
    assert proc.stdout.readline().strip() == "written"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".rummikub-tmp")]
    assert len(leftovers) == 1  # what the killed writer left
    assert subprocess.run(round_argv(sheet), cwd=REPO_ROOT).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sheet.csv.lock", "sheet.csv"]
    assert sheet.read_text().startswith("player,round 1,total")
