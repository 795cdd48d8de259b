"""The project's floors, read from the source (AST): which package may import which.

recognition (a photo in, tiles out) never imports the game readers nor calibration;
calibration builds on recognition only; the referee is the standard library alone."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (package folder, module prefixes it must never import, why)
FORBIDDEN = [
    ("vision/recognition", ("vision.game", "calibration"),
     "the recognition floor reads tiles; game readers and calibration sit above it"),
    ("calibration", ("vision.game",), "calibration builds on the recognition floor only"),
]


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, lazy ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # `from vision import game` names a module too
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def floor_problems(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    problems = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, module in imported_modules(path):
            if any(_under(module, prefix) for prefix in forbidden):
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return problems


@pytest.mark.parametrize(("folder", "forbidden", "why"), FORBIDDEN)
def test_floor_imports_nothing_above_it(folder, forbidden, why):
    assert (ROOT / folder).is_dir()
    assert floor_problems(folder, forbidden) == [], why


def test_referee_imports_only_the_standard_library():
    problems = []
    for path in sorted((ROOT / "referee").rglob("*.py")):
        for line, module in imported_modules(path):
            top = module.split(".")[0]
            if top and top not in sys.stdlib_module_names and top != "referee":
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert problems == []


def test_the_scan_sees_a_forbidden_import(tmp_path, monkeypatch):
    # The scan itself must be able to fail: a lazy import inside a function counts.
    fake = tmp_path / "vision" / "recognition"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("def f():\n    from vision.game.table import judge_table\n"
                                 "    from ..game import rack\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert floor_problems("vision/recognition", ("vision.game",)) == [
        "vision/recognition/bad.py:2 imports vision.game.table",
        "vision/recognition/bad.py:2 imports vision.game.table.judge_table",
        "vision/recognition/bad.py:3 imports vision.game",
        "vision/recognition/bad.py:3 imports vision.game.rack",
    ]
