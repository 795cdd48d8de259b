"""The models folder: every model runs with the shared session options, and a model file that
is there but broken gets one clear line naming it (never an onnxruntime traceback)."""

from __future__ import annotations

import os
import shutil
import subprocess

import cv2
import numpy as np
import pytest

from vision.recognition.sessions import (
    ModelsMissing,
    ModelUnreadable,
    read_sidecar,
    session_options,
)
from vision.recognition.settings import MODELS_DIR, REPO_ROOT

HAVE_MODELS = all((MODELS_DIR / name).is_file() for name in ("detector.onnx", "classifier.onnx"))
needs_models = pytest.mark.skipif(not HAVE_MODELS, reason=f"no models in {MODELS_DIR}")
SCRIPT = REPO_ROOT / ".venv" / "bin" / "rummikub"


def _models_copy(tmp_path):
    folder = tmp_path / "models"
    shutil.copytree(MODELS_DIR, folder, ignore=shutil.ignore_patterns("*.png", "*.md"))
    return folder


def test_worker_threads_do_not_spin():
    options = session_options(2)
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    assert options.intra_op_num_threads == 2 and options.inter_op_num_threads == 1


@needs_models
def test_every_loaded_model_uses_the_shared_options():
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load()
    for session in (reader.detector.session, reader.classifier.session):
        # the options a session was created with are readable back from it
        config = session.get_session_options()
        assert config.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert config.get_session_config_entry("session.inter_op.allow_spinning") == "0"


@needs_models
@pytest.mark.parametrize("name", ["detector.onnx", "classifier.onnx"])
@pytest.mark.parametrize("garbage", [b"", b"this is not an ONNX model\n" * 40])
def test_corrupt_model_file_is_named(tmp_path, name, garbage):
    from vision.recognition.pipeline import TileReader

    folder = _models_copy(tmp_path)
    (folder / name).write_bytes(garbage)
    with pytest.raises(ModelUnreadable, match=f"{name}.*cannot be loaded"):
        TileReader.load(folder)


@needs_models
@pytest.mark.parametrize("name", ["detector.json", "classifier.json", "pipeline.json"])
def test_corrupt_sidecar_is_named(tmp_path, name):
    from vision.recognition.pipeline import TileReader

    folder = _models_copy(tmp_path)
    (folder / name).write_text("{ not json")
    with pytest.raises(ModelUnreadable, match=name):
        TileReader.load(folder)


def test_unreadable_model_is_a_models_missing(tmp_path):
    # the CLI prints ModelsMissing as one line; a broken file must take the same path
    assert issubclass(ModelUnreadable, ModelsMissing)
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(ModelUnreadable, match="x.json"):
        read_sidecar(tmp_path / "x.json")


@needs_models
@pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")
def test_scan_with_a_corrupt_model_is_one_line(tmp_path):
    folder = _models_copy(tmp_path)
    (folder / "detector.onnx").write_bytes(os.urandom(3000))
    photo = tmp_path / "grey.jpg"
    cv2.imwrite(str(photo), np.full((60, 80, 3), 128, np.uint8))
    result = subprocess.run([str(SCRIPT), "scan", str(photo), "--models", str(folder)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "detector.onnx" in lines[0] and "Traceback" not in result.stderr
