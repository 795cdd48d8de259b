"""The hall's nginx example (docs/hall/nginx.conf) run for real in front of server
processes: the file itself, its `server` lines pointed at the processes and its `listen`
at a free port on 127.0.0.1, inside a minimal main config in a temporary folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.server_helpers import ROOT, free_port

EXAMPLE = ROOT / "docs" / "hall" / "nginx.conf"


def nginx_bin() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def site_config(backends: list[int], port: int) -> str:
    """The example with its two `server` lines replaced by `backends` and its port."""
    text = EXAMPLE.read_text()
    lines = "\n".join(f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;"
                      for p in backends)
    text, found = re.subn(r"(?m)^    server 127\.0\.0\.1:\d+.*\n(    server .*\n)*",
                          lines + "\n", text)
    assert found == 1, "docs/hall/nginx.conf: its upstream's server lines were not found"
    text, found = re.subn(r"listen \d+;", f"listen 127.0.0.1:{port};", text)
    assert found == 1, "docs/hall/nginx.conf: its listen line was not found"
    return text


class Nginx:
    def __init__(self, backends: list[int]):
        self.binary = nginx_bin()
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.root = Path(tempfile.mkdtemp(prefix="rummikub-nginx-"))
        (self.root / "site.conf").write_text(site_config(backends, self.port))
        temps = "\n".join(f"  {kind}_temp_path {self.root / kind};"
                          for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        user = "user root;\n" if os.geteuid() == 0 else ""  # its temp files are ours
        (self.root / "nginx.conf").write_text(
            f"{user}daemon off;\nworker_processes 1;\npid {self.root / 'nginx.pid'};\n"
            f"error_log {self.root / 'error.log'} warn;\nevents {{}}\n"
            f"http {{\n  access_log {self.root / 'access.log'};\n{temps}\n"
            f"  include {self.root / 'site.conf'};\n}}\n")
        self.proc: subprocess.Popen | None = None

    def check(self) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, "-t", "-p", str(self.root), "-c",
                               str(self.root / "nginx.conf")], capture_output=True, text=True,
                              timeout=30)

    def start(self, timeout: float = 15) -> Nginx:
        import httpx

        self.proc = subprocess.Popen([self.binary, "-p", str(self.root), "-c",
                                      str(self.root / "nginx.conf")],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.proc.stdout.read()} "
                                   f"{self.error_log()}")
            try:
                httpx.get(self.base + "/api/health", timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("nginx did not start in time")

    def error_log(self) -> str:
        log = self.root / "error.log"
        return log.read_text()[-2000:] if log.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: nginx's fast shutdown
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)
