"""A photo showing more tiles than one box holds (two boxes, or many false finds)."""

from referee import edition
from tests.table_helpers import detections_from, row
from vision.game.table import judge_table


def test_more_tiles_than_a_box_get_no_suggestion_and_say_why():
    runs = [f"R{n}" for n in range(1, 14)]
    codes, quads = [], []
    for k in range(9):  # 117 tiles in nine runs: more than the 106 of the original box
        codes += runs
        quads += row(runs, x=50, y=60 + 120 * k)
    codes.append("K5")  # a lone tile makes the table invalid, so a fix is looked for
    quads += row(["K5"], x=900, y=1300)
    reading = judge_table(detections_from(codes, quads), edition("original"))
    assert not reading.table_valid and reading.suggestion is None
    assert any(w.startswith("no suggestion: 118 tiles, but a box of the original edition "
                            "holds 106") for w in reading.warnings), reading.warnings
