"""How the ONNX models run: one set of session options, and one clear error for a bad file.

Every model the pipeline loads (detector, classifier, and whatever joins them) goes through
`load_session`, so they all run the same way:

- worker threads do not spin. onnxruntime's default lets idle worker threads busy-wait
  for the next run; with two sessions of two threads on a two-core machine the process
  then burns twice the CPU and pre-empts itself (measured: 92 ms -> 51 ms per photo with
  spinning off, byte-identical output);
- a fixed, small number of threads per session (the photo is small; more threads only
  add hand-offs), one inter-op thread, every graph optimisation.

A model file that is there but cannot be loaded (truncated, not ONNX, a sidecar that is
not JSON) raises `ModelUnreadable`, a `ModelsMissing`: callers that print `ModelsMissing`
as one line print this one too, and the message names the file.
"""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_THREADS = 2


class ModelsMissing(FileNotFoundError):
    """The ONNX models are not where they were looked for (one clear line for the user)."""


class ModelUnreadable(ModelsMissing):
    """A model file (or its JSON sidecar) is there but cannot be loaded."""


def session_options(threads: int = DEFAULT_THREADS):
    """The onnxruntime SessionOptions every model of the pipeline runs with."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, int(threads))
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


def load_session(path: Path | str, threads: int = DEFAULT_THREADS):
    """An onnxruntime InferenceSession on the CPU for the model file at `path`.

    Raises `ModelsMissing` when the file is not there and `ModelUnreadable` naming the
    file when onnxruntime cannot load it.
    """
    import onnxruntime as ort

    path = Path(path)
    if not path.is_file():
        raise ModelsMissing(f"model file missing: {path} (run `make train`, or set RUMMIKUB_MODELS)")
    try:
        return ort.InferenceSession(str(path), session_options(threads),
                                    providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own classes, all bare Exceptions
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        # "[ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Load model from X failed:Protobuf
        # parsing failed." -> keep the part after "failed:" when there is one
        reason = reason.rsplit("failed:", 1)[-1].strip() or reason
        raise ModelUnreadable(
            f"model file {path} cannot be loaded (not a valid ONNX model: {reason})"
        ) from None


def read_sidecar(path: Path | str) -> dict:
    """A model's JSON sidecar as a dict; `ModelUnreadable` naming the file when it is not
    a JSON object."""
    path = Path(path)
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelUnreadable(f"model settings file {path} cannot be read: {error}") from None
    if not isinstance(spec, dict):
        raise ModelUnreadable(f"model settings file {path} cannot be read: not a JSON object")
    return spec
