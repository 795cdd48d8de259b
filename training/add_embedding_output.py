"""Give an exported classifier a second output, "embedding": its penultimate features.

A calibration profile (`calibration/`) learns an edition's number shapes as prototypes in
this feature space, so the one inference that reads a tile also places it next to the
prototypes: no second network, no torch at run time.

The embedding is the input of the graph's last Gemm (the fully connected layer that
makes the logits), one row per crop. Graph surgery only: no weights change, and the
logits stay bit-identical. The sidecar gets `"embedding_output"` and the new file's
`sha256` (a profile stores that hash to know which model it was made for).

    python -m training.add_embedding_output [models/]

Needs the `onnx` package (in the `train` extra). Running it twice changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

OUTPUT_NAME = "embedding"


def add_embedding_output(model_path: Path, logits_name: str | None = None) -> str:
    """Rewrite `model_path` with an `embedding` output; returns the name of the tensor used."""
    import onnx
    from onnx import helper

    model = onnx.load(str(model_path))
    graph = model.graph
    if any(o.name == OUTPUT_NAME for o in graph.output):
        return OUTPUT_NAME
    logits_name = logits_name or graph.output[0].name
    producer = next((n for n in graph.node if logits_name in n.output), None)
    if producer is None or producer.op_type not in ("Gemm", "MatMul"):
        raise ValueError(f"{model_path}: the logits {logits_name!r} do not come from a Gemm/MatMul "
                         f"(found {producer.op_type if producer else 'nothing'})")
    features = producer.input[0]
    width = _feature_width(graph, producer)
    # An Identity gives the output its own name, so later exports and this one agree.
    graph.node.append(helper.make_node("Identity", [features], [OUTPUT_NAME],
                                       name="embedding_identity"))
    graph.output.append(helper.make_tensor_value_info(
        OUTPUT_NAME, onnx.TensorProto.FLOAT, [graph.output[0].type.tensor_type.shape.dim[0]
                                              .dim_param or "n", width]))
    onnx.checker.check_model(model)
    onnx.save(model, str(model_path))
    return features


def _feature_width(graph, producer) -> int:
    """Rows of the last layer's weight matrix seen from its input side."""
    weights = {t.name: t for t in graph.initializer}
    w = weights.get(producer.input[1])
    if w is None:
        raise ValueError(f"last layer's weight {producer.input[1]!r} is not an initializer")
    trans_b = next((a.i for a in producer.attribute if a.name == "transB"), 0)
    dims = list(w.dims)
    return int(dims[1] if (producer.op_type == "Gemm" and trans_b) else dims[0])


def update_sidecar(models_dir: Path) -> dict:
    spec_path = models_dir / "classifier.json"
    spec = json.loads(spec_path.read_text()) if spec_path.is_file() else {}
    spec["embedding_output"] = OUTPUT_NAME
    spec["sha256"] = hashlib.sha256((models_dir / "classifier.onnx").read_bytes()).hexdigest()
    spec_path.write_text(json.dumps(spec, indent=1) + "\n")
    return spec


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    models_dir = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "models"
    spec_path = models_dir / "classifier.json"
    spec = json.loads(spec_path.read_text()) if spec_path.is_file() else {}
    logits = spec.get("output", {}).get("name")
    used = add_embedding_output(models_dir / "classifier.onnx", logits)
    spec = update_sidecar(models_dir)
    print(f"{models_dir / 'classifier.onnx'}: output {OUTPUT_NAME!r} = {used}; "
          f"sha256 {spec['sha256'][:12]}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
