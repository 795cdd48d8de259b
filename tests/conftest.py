import pytest

from vision.recognition.settings import dataset_dir


@pytest.fixture(scope="session")
def real_photos_dir():
    """The real labelled photos, when this machine has them; tests using it skip otherwise."""
    root = dataset_dir()
    if not (root / "valid" / "images").is_dir():
        pytest.skip(f"real photos not found at {root} (set RUMMIKUB_DATA)")
    return root


# The live-table tests (tests/tracker_helpers.py): the real photos they play on, and the
# tile reader, loaded once per module.
@pytest.fixture(scope="module")
def table_photos(real_photos_dir):
    """Three real valid/ photos of 54, 30 and 12 tiles."""
    from tests.tracker_helpers import valid_photos

    return valid_photos(real_photos_dir)


@pytest.fixture(scope="module")
def tile_reader():
    """The tile reader on the shipped models; the test skips where they are missing."""
    from tests.tracker_helpers import load_tile_reader

    return load_tile_reader()


@pytest.fixture(scope="module")
def valid_by_key(real_photos_dir):
    """The held-out valid/ photos by their key (the gates' tests paint and blur them)."""
    from training.real_data import load_split

    return {p.key: p for p in load_split("valid", real_photos_dir)}


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


@pytest.fixture
def clock():
    """A wall clock the test moves by hand; a module's own `app` passes it to `make_app`."""
    from tests.server_helpers import FakeClock

    return FakeClock()


@pytest.fixture
def game(client, app):
    """A game of Ann and Ben in its first round (a module needing another game defines its
    own `game`)."""
    from tests.server_helpers import game_in_round

    return game_in_round(client, app)


# ------------------------------------------------------------------- PostgreSQL and SQLite
# The game server's API tests run on both databases: a test of a tests/test_server_*.py
# module that uses the `app` fixture runs once on a SQLite file and once on a real
# PostgreSQL server (tests/pg_server.py). Not doubled: the real-process, browser, start
# check and disk tests, which are about the SQLite file or the process.
SINGLE_DATABASE = {"test_server_process", "test_server_db_checks", "test_server_disk_full",
                   "test_server_migrations", "test_server_storage"}


def pytest_generate_tests(metafunc):
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if (module.startswith("test_server_") and module not in SINGLE_DATABASE
            and "app" in metafunc.fixturenames):
        metafunc.parametrize("server_db", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server for the session; the tests using it skip where none is installed
    (`apt-get install postgresql`)."""
    from tests.pg_server import PostgresServer, pg_bin

    found = pg_bin()
    if found is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    server = PostgresServer(found).start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty PostgreSQL database for one test."""
    url = postgres_server.new_database()
    yield url
    postgres_server.drop_database(url, missing_ok=True)


@pytest.fixture(autouse=True)
def server_db(request):
    """The database `make_app` serves from: None (a SQLite file in the test's folder), or
    a PostgreSQL URL where `pytest_generate_tests` asked for both."""
    if getattr(request, "param", "sqlite") == "sqlite":
        yield None
        return
    from tests import server_helpers

    url = request.getfixturevalue("postgres_url")
    server_helpers.DATABASE = url
    try:
        yield url
    finally:
        server_helpers.DATABASE = None
