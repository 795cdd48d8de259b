import pytest

from vision.recognition.settings import dataset_dir


@pytest.fixture(scope="session")
def real_photos_dir():
    """The real labelled photos, when this machine has them; tests using it skip otherwise."""
    root = dataset_dir()
    if not (root / "valid" / "images").is_dir():
        pytest.skip(f"real photos not found at {root} (set RUMMIKUB_DATA)")
    return root


# The game server's tests: `app` is a server on a fresh SQLite file in the test's own
# folder (a test module with other settings defines its own `app`), `client` talks to it
# through FastAPI's TestClient with its lifespan run, so the models are loaded once per app.
@pytest.fixture
def app(tmp_path):
    from tests.server_helpers import make_app

    return make_app(tmp_path)


@pytest.fixture
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c
