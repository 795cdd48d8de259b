"""Reading Rummikub tiles from photos: numpy, OpenCV and onnxruntime only (never torch).

The main objects are importable from here, but lazily, so `import vision` stays fast and
loads neither onnxruntime nor the models until something is used:

    from vision import TileReader, TileDetections, TableAnnotator
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "TileDetections": "vision.recognition.detections",
    "TILE_CLASSES": "vision.recognition.labels",
    "TileReader": "vision.recognition.pipeline",
    "ModelsMissing": "vision.recognition.pipeline",
    "TableAnnotator": "vision.recognition.annotate",
    "decode_image": "vision.recognition.decode",
    "read_photo": "vision.recognition.decode",
    "PhotoError": "vision.recognition.decode",
    "TileDetector": "vision.recognition.detect",
    "TileClassifier": "vision.recognition.classify",
    "judge_table": "vision.game.table",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'vision' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
