"""Start a training from shipped weights: copy an ONNX model's initializers into the torch net.

The exported graphs hold each convolution with its batch norm folded in (weight and bias)
and each fully connected layer as a Gemm. `load_onnx_weights` walks the graph's Conv and
Gemm nodes in order and the net's Conv2d and Linear layers in the order a forward pass
calls them, checks that every shape matches, and copies: a conv followed by a batch norm
gets the folded weight, and its batch norm becomes the identity plus the folded bias
(running mean 0, variance 1 - eps, scale 1). Train such a net with `freeze_batch_norm`
(the batch norms keep those statistics and act as a learned per-channel scale and shift,
folded again at export): batch statistics would change what the shipped weights compute.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn


def _call_order(model: nn.Module, example: torch.Tensor, kinds) -> list[nn.Module]:
    order: list[nn.Module] = []
    hooks = [m.register_forward_hook(lambda mod, *_: order.append(mod))
             for m in model.modules() if isinstance(m, kinds)]
    try:
        with torch.no_grad():
            model.eval()(example)
    finally:
        for h in hooks:
            h.remove()
    return order


def _batch_norm_after(model: nn.Module) -> dict[nn.Module, nn.BatchNorm2d]:
    after = {}
    for seq in model.modules():
        if isinstance(seq, nn.Sequential):
            mods = list(seq)
            for a, b in zip(mods, mods[1:], strict=False):
                if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d):
                    after[a] = b
    return after


def load_onnx_weights(model: nn.Module, onnx_path: Path, example: torch.Tensor,
                      check: bool = True) -> int:
    """Copy `onnx_path`'s weights into `model` (see the module doc); returns the number of
    layers copied. With `check`, the net's output must match onnxruntime's on `example`."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(onnx_path))
    inits = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    convs, gemms = [], []
    for node in proto.graph.node:
        if node.op_type == "Conv":
            convs.append([inits[name] for name in node.input[1:]])
        elif node.op_type == "Gemm":
            attrs = {a.name: a.i for a in node.attribute if a.type == onnx.AttributeProto.INT}
            if not attrs.get("transB", 0):
                raise ValueError(f"{onnx_path}: a Gemm without transB is not a Linear layer")
            gemms.append([inits[name] for name in node.input[1:]])
    torch_convs = _call_order(model, example, nn.Conv2d)
    torch_linears = _call_order(model, example, nn.Linear)
    if len(torch_convs) != len(convs) or len(torch_linears) != len(gemms):
        raise ValueError(f"{onnx_path}: {len(convs)} convs / {len(gemms)} fc layers, the net has "
                         f"{len(torch_convs)} / {len(torch_linears)}")
    bn_after = _batch_norm_after(model)
    with torch.no_grad():
        for conv, (weight, *bias) in zip(torch_convs, convs, strict=True):
            if tuple(conv.weight.shape) != weight.shape:
                raise ValueError(f"{onnx_path}: conv weight {weight.shape} does not fit "
                                 f"{tuple(conv.weight.shape)}")
            conv.weight.copy_(torch.from_numpy(np.array(weight)))
            b = torch.from_numpy(np.array(bias[0])) if bias else torch.zeros(weight.shape[0])
            bn = bn_after.get(conv)
            if bn is not None:
                bn.weight.fill_(1.0)
                bn.bias.copy_(b)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            elif conv.bias is not None:
                conv.bias.copy_(b)
            elif bias and np.abs(bias[0]).max() > 0:
                raise ValueError(f"{onnx_path}: a conv bias with nowhere to go")
        for lin, (weight, bias) in zip(torch_linears, gemms, strict=True):
            if tuple(lin.weight.shape) != weight.shape:
                raise ValueError(f"{onnx_path}: fc weight {weight.shape} does not fit "
                                 f"{tuple(lin.weight.shape)}")
            lin.weight.copy_(torch.from_numpy(np.array(weight)))
            lin.bias.copy_(torch.from_numpy(np.array(bias)))
    if check:
        import onnxruntime as ort

        session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: example.numpy()}
        want = session.run(None, feed)[0]
        with torch.no_grad():
            got = model.eval()(example)
        got = got[0] if isinstance(got, tuple) else got
        if want.shape != tuple(got.shape):
            raise ValueError(f"{onnx_path}: output {want.shape} vs net {tuple(got.shape)}")
        err = float(np.abs(want - got.numpy()).max())
        if err > 1e-3 * max(1.0, float(np.abs(want).max())):
            raise ValueError(f"{onnx_path}: the loaded net differs from the file by {err:.2e}")
    return len(torch_convs) + len(torch_linears)


def freeze_batch_norm(model: nn.Module) -> None:
    """Keep every batch norm on its stored statistics (call after `model.train()`)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
