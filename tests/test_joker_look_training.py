"""`make train` rebuilds the joker look too: the recipe, the file and its sidecar."""

import hashlib
import json
import shlex
from pathlib import Path

import pytest

from training import joker_look

MODELS = Path(__file__).resolve().parents[1] / "models"


def _options(command: str) -> dict[str, str]:
    words = shlex.split(command)[3:]  # after "python -m training.classifier.train"
    return dict(zip(words[::2], words[1::2], strict=True))


def _fake_trainer(calls: list, code: int = 0, files: bool = True):
    def train(argv):
        calls.append(list(argv))
        work = Path(argv[argv.index("--out") + 1])
        work.mkdir(parents=True, exist_ok=True)
        if files:
            (work / "classifier.onnx").write_bytes(b"not really a network")
            (work / "classifier.json").write_text(json.dumps(
                {"labels": ["B1"], "sha256": "stale", "trained": {"seed": 61}}))
        return code
    return train


def test_the_recipe_is_the_one_the_shipped_model_was_trained_with():
    shipped = json.loads((MODELS / "joker_look.json").read_text())["trained"]["command"]
    ran = joker_look.trainer_args(MODELS / "classifier.onnx", Path("w"), MODELS, 61, 16000, 60)
    want, got = _options(shipped), dict(zip(ran[::2], ran[1::2], strict=True))
    for where in ("--out", "--init-onnx", "--detector"):  # paths, not the recipe
        want.pop(where, None)
        got.pop(where)
    assert got == want


def test_the_trained_network_is_installed_with_its_own_sidecar(tmp_path):
    init = tmp_path / "models" / "classifier.onnx"
    init.parent.mkdir()
    init.write_bytes(b"the classifier")
    calls = []
    code = joker_look.main(["--init", str(init), "--out", str(tmp_path / "models"),
                            "--work", str(tmp_path / "work"), "--steps", "5"],
                           train=_fake_trainer(calls))
    assert code == 0
    assert calls and calls[0][calls[0].index("--init-onnx") + 1] == str(init)
    assert calls[0][calls[0].index("--steps") + 1] == "5"
    onnx = tmp_path / "models" / "joker_look.onnx"
    assert onnx.read_bytes() == b"not really a network"
    meta = json.loads((tmp_path / "models" / "joker_look.json").read_text())
    assert meta["sha256"] == hashlib.sha256(b"not really a network").hexdigest()
    assert meta["role"].startswith("joker look")
    assert meta["labels"] == ["B1"] and meta["trained"] == {"seed": 61}
    assert init.read_bytes() == b"the classifier"  # the classifier itself is left alone


def test_a_failed_training_installs_nothing(tmp_path):
    init = tmp_path / "classifier.onnx"
    init.write_bytes(b"x")
    out = tmp_path / "out"
    code = joker_look.main(["--init", str(init), "--out", str(out), "--work",
                            str(tmp_path / "w")], train=_fake_trainer([], code=3))
    assert code == 3 and not out.exists()
    with pytest.raises(SystemExit, match="did not finish"):
        joker_look.main(["--init", str(init), "--out", str(out), "--work", str(tmp_path / "w2")],
                        train=_fake_trainer([], files=False))
    assert not (out / "joker_look.onnx").exists()


def test_without_the_classifier_it_says_what_to_do_first(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        joker_look.main(["--init", str(tmp_path / "none.onnx")], train=_fake_trainer([]))
    assert stop.value.code == 2
    assert "train the classifier first" in capsys.readouterr().err
