"""Pairing the networks of two trainings into one models folder (training/compose.py)."""

from training import compose


def test_a_folder_without_the_network_is_named_and_nothing_is_written(tmp_path, capsys):
    detector = tmp_path / "run1"
    detector.mkdir()
    (detector / "detector.onnx").write_bytes(b"x")  # its sidecar is missing
    out = tmp_path / "paired"
    code = compose.main(["--detector", str(detector), "--classifier", str(tmp_path / "run2"),
                         "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "detector.json" in err and err.count("\n") == 1
    assert not any(out.glob("*.onnx"))
