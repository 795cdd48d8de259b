"""Installable anywhere (issue #20): the built wheel carries the models and the sample
photos, and an installed `rummikub` scans a photo and serves the page from any folder.

The wheel is installed into a fresh venv with no access to this checkout or the dev venv
(`--without-pip`, then this interpreter's pip installs into it with `--python`); its
dependencies come from the package index (about 45 s with pip's cache warm, 70 s cold on
the 2-core dev machine; a fresh venv with its own pip adds 40 s of ensurepip, hence
`--without-pip`). Marked `wheel`: `pytest -m "not wheel"` (or RUMMIKUB_SKIP_WHEEL=1)
leaves it out offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.server_helpers import ROOT, free_port

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(bool(os.environ.get("RUMMIKUB_SKIP_WHEEL")),
                       reason="RUMMIKUB_SKIP_WHEEL is set (offline)"),
]


def _run(*command, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin/ folder of a fresh venv with only the built wheel (and its dependencies)."""
    tmp = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the files git keeps (not ignored): a build writes build/ and
    # *.egg-info, and a checkout holds caches and venvs.
    source = tmp / "source"
    files = _run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                 cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 str(source), "-w", str(tmp / "dist"), cwd=tmp, env=_env(), timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = (tmp / "dist").glob("rummikub_referee-*.whl")
    venv = tmp / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", str(venv), timeout=120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    start = time.monotonic()
    done = _run(sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                str(wheel), cwd=tmp, env=_env(), timeout=600)
    if done.returncode != 0 and "No matching distribution" in done.stderr + done.stdout:
        pytest.skip("the package index is not reachable: " + done.stderr[-300:])
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"wheel installed with its dependencies in {time.monotonic() - start:.0f} s")
    return venv / "bin"


def _env() -> dict:
    """An environment that cannot reach this checkout: no PYTHONPATH (which would also show
    pip this checkout's metadata as an installed rummikub-referee), no models path."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "RUMMIKUB_MODELS", "VIRTUAL_ENV")}


def test_the_installed_package_is_the_wheels_own(installed, tmp_path):
    where = _run(str(installed / "python"), "-c",
                 "import app, vision.recognition.settings as s; print(app.__file__); print(s.MODELS_DIR);"
                 " print(s.SAMPLES_DIR)", cwd=tmp_path, env=_env())
    assert where.returncode == 0, where.stderr
    app_file, models, samples = where.stdout.split()
    venv = installed.parent
    for path in (app_file, models, samples):
        assert Path(path).is_relative_to(venv), path
    assert (Path(models) / "detector.onnx").is_file()
    assert (Path(samples) / "white_table.jpg").is_file()


def test_the_installed_command_scans_a_photo(installed, tmp_path):
    photo = tmp_path / "white_table.jpg"
    shutil.copy(ROOT / "sample_images" / "white_table.jpg", photo)
    scan = _run(str(installed / "rummikub"), "scan", str(photo), "--json", cwd=tmp_path,
                env=_env(), timeout=300)
    # 1: read, and the table is not valid (the exit status `rummikub --help` describes).
    assert scan.returncode in (0, 1) and not scan.stderr, scan.stderr[-2000:]
    here = _run(sys.executable, "-m", "app", "scan", str(photo), "--json", cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    # The installed models read the photo as this checkout's do.
    assert json.loads(scan.stdout) == json.loads(here.stdout)
    assert scan.returncode == here.returncode
    [result] = json.loads(scan.stdout)
    assert len(result["tiles"]) > 10


def test_the_installed_server_serves_health_and_the_samples(installed, tmp_path):
    import httpx

    port = free_port()
    server = subprocess.Popen(
        [str(installed / "rummikub"), "serve", "--host", "127.0.0.1", "--port", str(port),
         "--data", str(tmp_path / "data"), "--no-qr"],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read()
            try:
                health = httpx.get(base + "/api/health", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the installed server did not start"
                time.sleep(0.3)
        assert health.status_code == 200 and health.json()["models"] is True
        assert "white_table.jpg" in httpx.get(base + "/api/samples").json()
        assert httpx.get(base + "/").status_code == 200  # the page ships too
    finally:
        server.terminate()
        server.wait(20)
