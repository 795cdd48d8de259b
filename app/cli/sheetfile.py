"""A score sheet file (CSV) changed in place, safely when several commands write at once.

`update_sheet(path, change)` reads the sheet, lets `change` add to it, and writes it back,
with the whole read-modify-write under an exclusive lock (`fcntl.flock` on `.NAME.lock`
beside the sheet): eight `rummikub round --sheet S` started together leave eight rounds,
not whichever write came last.

The new text goes to a temporary file beside the sheet that replaces it in one rename, so
a crash or a full disk never leaves half a sheet. The temporary file has a recognisable
name (`.NAME.<random>.rummikub-tmp`); one left by a writer that was killed is removed by
the next writer, which holds the lock and so knows no one else is writing. The sheet keeps
its permission bits, and a sheet that is a symbolic link is written through to its target:
the link stays a link.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from referee import ScoreSheet

TEMP_SUFFIX = ".rummikub-tmp"


def update_sheet(path: Path | str, change: Callable[[ScoreSheet | None], ScoreSheet]) -> ScoreSheet:
    """Apply `change` to the sheet at `path` (None when there is none yet or it is empty)
    and write the result back. Raises OSError when the file cannot be read or written
    (the sheet is then unchanged) and whatever `change` or `ScoreSheet.from_csv` raise."""
    target = Path(os.path.realpath(path))  # through any symbolic links to the file itself
    lock_path = target.parent / f".{target.name}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes
        remove_stale_temps(target)
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        sheet = change(ScoreSheet.from_csv(text) if text.strip() else None)
        _replace(target, sheet.to_csv())
    return sheet


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove temporary files that writers of `target` left behind (call under the lock)."""
    removed = []
    for leftover in target.parent.glob(f".{_glob_escape(target.name)}.*{TEMP_SUFFIX}"):
        try:
            leftover.unlink()
            removed.append(leftover)
        except FileNotFoundError:
            pass
    return removed


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _replace(target: Path, text: str) -> None:
    try:
        st = os.stat(target)
        mode = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        st, mode = None, _new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600; the sheet keeps the bits it had
        if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except PermissionError:
                pass  # only root may give a file away; it then belongs to the writer
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a power cut right after must not lose the round)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
