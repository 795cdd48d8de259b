"""Pieces of the storage tests: release 0.1.0's database, read-only and small mounts.

Read-only places are real: a folder is a tmpfs remounted read-only, a file a read-only
bind mount (root ignores file modes, so chmod would prove nothing when the tests run as
root). Where mount is not permitted the tests that need it skip, saying so.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DB_V010 = ROOT / "tests" / "data" / "db-v0.1.0.sqlite3"


def copy_v010(folder: Path, name: str = "rummikub.sqlite3") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    shutil.copyfile(DB_V010, target)
    return target


def raw_rows(path: Path, sql: str) -> list[tuple]:
    """Rows read with the standard sqlite3 module, not through the code under test."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} not permitted here: {done.stderr.strip()}")


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextmanager
def tmpfs(folder: Path, size: str = "2m"):
    """A small tmpfs at `folder` (made empty), unmounted at the end."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    folder.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield folder
    finally:
        _umount(folder)


def remount_read_only(folder: Path) -> None:
    _mount("-o", "remount,ro", str(folder))


@contextmanager
def read_only_file(path: Path):
    """`path` (an existing file) read-only for everyone, root included."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a read-only bind mount needs root and mount(8)")
    _mount("--bind", str(path), str(path))
    try:
        _mount("-o", "remount,ro,bind", str(path))
        yield path
    finally:
        _umount(path)


def serve(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m app serve ARGS` on 127.0.0.1 and a port nobody listens on, as a user
    runs it; a database refused makes it exit before it listens."""
    from tests.server_helpers import free_port

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port",
         str(free_port()), "--no-qr", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
