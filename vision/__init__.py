"""Reading Rummikub tiles from photos: numpy, OpenCV and onnxruntime only (never torch).

The main objects are importable from here, but lazily, so `import vision` stays fast and
loads neither onnxruntime nor the models until something is used:

    from vision import TileReader, TileDetections, TableAnnotator
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "TileDetections": "vision.detections",
    "TILE_CLASSES": "vision.labels",
    "TileReader": "vision.pipeline",
    "ModelsMissing": "vision.pipeline",
    "TableAnnotator": "vision.annotate",
    "decode_image": "vision.decode",
    "read_photo": "vision.decode",
    "PhotoError": "vision.decode",
    "TileDetector": "vision.detect",
    "TileClassifier": "vision.classify",
    "judge_table": "vision.table",
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
