"""The table bench's real table: valid/rummy-36 as its labels lie is judged as the photo shows."""

from __future__ import annotations

from bench.table_bench import _detections, invalid_sets, table_54
from referee import DEFAULT_RULES
from vision.game.table import judge_table


def test_the_real_bench_table_is_invalid_exactly_where_the_photo_is(real_photos_dir):
    name, codes, quads = table_54()
    assert name == "valid/rummy-36 labels" and len(codes) == 54
    reading = judge_table(_detections(codes, quads), DEFAULT_RULES)
    # The photo lays a run with a gap (no K11) and a pair of sevens: 14 valid sets, 2 not.
    assert len(reading.sets) == 16 and not reading.table_valid
    assert sorted(invalid_sets(reading)) == ["B7 K7", "K8 K9 K10 K12"]
    assert reading.suggestion is not None  # its 54 tiles can be arranged into valid sets
