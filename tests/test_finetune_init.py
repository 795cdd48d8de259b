"""Fine-tuning starts from the shipped weights; the classifier exports its embedding too."""

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the train extra
pytest.importorskip("onnx")

from training.classifier.net import TileNet  # noqa: E402
from training.onnx_init import freeze_batch_norm, load_onnx_weights  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"


def test_the_shipped_classifier_loads_into_the_torch_net_and_computes_the_same():
    net = TileNet(106)
    example = torch.rand(3, 3, 44, 32) * 4 - 2
    # load_onnx_weights compares the net with onnxruntime on `example` and raises if apart
    assert load_onnx_weights(net, MODELS / "classifier.onnx", example) == 6
    net.train()
    freeze_batch_norm(net)
    bn = next(m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d))
    assert not bn.training, "frozen batch norms keep the stored statistics"


def test_weights_that_do_not_fit_the_net_are_refused():
    with pytest.raises(ValueError, match="does not fit"):
        load_onnx_weights(TileNet(106, arch="lite"), MODELS / "classifier.onnx",
                          torch.zeros(1, 3, 44, 32))


def test_the_exported_classifier_has_an_embedding_output_per_crop(tmp_path):
    import onnxruntime as ort

    from training.classifier.train import export

    path = export(TileNet(106), tmp_path, {})
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == ["logits", "embedding"]
    logits, embedding = session.run(None, {"crops": np.zeros((5, 3, 44, 32), np.float32)})
    assert logits.shape == (5, 106) and embedding.shape == (5, 128)
    import json

    assert json.loads((tmp_path / "classifier.json").read_text())["embedding_output"] == "embedding"
