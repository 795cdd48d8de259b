"""Packaging beyond pyproject.toml: the wheel carries the models and the sample photos.

`models/` and `sample_images/` stay where they are in the repository (the training writes
there, the docs point there) and are installed as the packages `rummikub_models` and
`rummikub_samples`; `vision.recognition.settings` finds them in a checkout or an installed wheel.
"""

from setuptools import find_namespace_packages, setup

CODE = find_namespace_packages(include=["referee*", "vision*", "calibration*", "app*"])
DATA = {"rummikub_models": "models", "rummikub_samples": "sample_images"}

setup(
    packages=CODE + list(DATA),
    package_dir=DATA,
    package_data={
        "": ["*.json", "*.html", "*.js", "*.css", "*.mako"],
        "rummikub_models": ["*.onnx", "*.json", "*.md"],
        "rummikub_samples": ["*.jpg", "*.json", "*.md"],
    },
)
