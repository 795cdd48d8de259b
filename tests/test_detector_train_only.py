"""`training.detector.train --train-only box`: the box outputs learn, the heat map does not."""

import pytest

torch = pytest.importorskip("torch")

from training.detector.net import TileNet  # noqa: E402
from training.detector.train import Normalised, main, train_only_box  # noqa: E402


def test_a_step_moves_the_boxes_and_leaves_the_heat_map_and_backbone_as_they_were():
    torch.manual_seed(0)
    model = Normalised(TileNet())
    model.train()
    trained = train_only_box(model)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    x = torch.rand(2, 3, 64, 64) * 255
    first = model(x).detach()
    opt = torch.optim.AdamW(trained, lr=1e-2, weight_decay=0.0)
    for _ in range(3):  # every output pushed, the heat map's too
        loss = (model(x) - 1.0).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = model(x).detach()
    assert torch.equal(after[:, :1], first[:, :1])
    assert not torch.allclose(after[:, 1:], first[:, 1:])
    last = "net.head.1."
    changed = [n for n, p in model.named_parameters() if not torch.equal(p, before[n])]
    assert changed and all(n.startswith(last) for n in changed)
    weight = dict(model.named_parameters())[last + "weight"]
    assert torch.equal(weight[0], before[last + "weight"][0])
    bn = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bn and not any(m.training for m in bn)


def test_box_only_without_a_detector_to_start_from_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--train-only", "box", "--steps", "1"])
    assert stop.value.code == 2
    assert "needs a detector to start from" in capsys.readouterr().err
