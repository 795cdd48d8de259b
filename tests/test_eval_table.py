"""`python -m bench.eval_table --json OUT`: the counts it prints, by part, in a file; a
part it cannot run is named as skipped. Small runs: the numbers themselves are `make eval`'s.
"""

from __future__ import annotations

import json

from bench import eval_table


def test_the_counts_are_written_by_part_and_agree_with_themselves(tmp_path, monkeypatch,
                                                                   capsys):
    # No real photos here: that part is named as skipped, the rendered ones still run.
    monkeypatch.setenv("RUMMIKUB_DATA", str(tmp_path / "no-photos"))
    out = tmp_path / "eval" / "table.json"
    assert eval_table.main(["--rendered", "4", "--rendered-photos", "2", "--turns", "1",
                            "--racks", "1", "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert "real photos: skipped" in printed
    assert any(s.startswith("real photos:") for s in got["skipped"])
    assert "real_end_to_end" not in got
    geometry = got["rendered_geometry"]
    assert geometry["tables"] == 4 and 0 <= geometry["sets_right"] <= geometry["sets"]
    assert f"{geometry['sets_right']}/{geometry['sets']}" in printed
    photos = got["rendered_end_to_end"]
    assert photos["tables"] == 2 and 0 <= photos["tables_right"] <= photos["tables_grouped_right"]
    assert got["rendered_turns"]["turns"] == 1
    racks = got["rendered_racks"]
    assert racks["scenes"] == 1 and racks["tiles"] > 0
    assert 0 <= racks["read_right"] <= racks["tiles"]
