"""A real PostgreSQL server for the tests, from Debian's `postgresql` package.

`initdb` and `pg_ctl` (from /usr/lib/postgresql/*/bin) into a temporary folder, listening
only on a unix socket there (no port to collide with), as the package's `postgres` user
when the tests run as root (PostgreSQL refuses to run as root). The package's own cluster
and service are never used. Each test gets a database of its own, dropped after it.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

WHERE = "/usr/lib/postgresql/*/bin"


def pg_bin() -> Path | None:
    found = sorted(glob.glob(f"{WHERE}/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    def __init__(self, bin_dir: Path):
        self.bin = bin_dir
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
        self.root = Path(tempfile.mkdtemp(prefix="rummikub-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._engine = None

    def _run(self, *args: str, timeout: float = 120) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()} {log[-2000:]}")

    def start(self) -> PostgresServer:
        if self.user:
            shutil.chown(self.root, self.user)
        # Trust on a socket only this folder's owner reaches; no fsync: test data only.
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E",
                  "UTF8", "--locale=C", "--no-sync")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-o",
                  f"-k {self.root} -c listen_addresses='' -F -c max_connections=200", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.root}"

    def _admin(self):
        from sqlalchemy import create_engine

        if self._engine is None:
            self._engine = create_engine(self.url(), isolation_level="AUTOCOMMIT")
        return self._engine

    def new_database(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        with self._admin().connect() as db:
            # From template0 (never changed, so never waits for a checkpoint).
            db.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def drop_database(self, url: str, missing_ok: bool = False) -> None:
        from sqlalchemy import make_url

        name = make_url(url).database
        with self._admin().connect() as db:
            db.exec_driver_sql(f'DROP DATABASE {"IF EXISTS " if missing_ok else ""}"{name}"'
                               " WITH (FORCE)")

    def stop(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
