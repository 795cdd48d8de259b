"""Two server processes on one PostgreSQL database: a game's row locked by one is skipped
by the other, and a change one commits is heard by the other (ids over LISTEN/NOTIFY).

The other process is a real one (`python -c`), driven line by line over its stdin/stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from app.server.storage import Storage
from tests.db_helpers import ROOT

OTHER = """
import sys
from app.server.storage import Storage
storage = Storage(sys.argv[1])
game_id = sys.argv[2]
with storage.transaction() as db:
    row = storage.lock_game(db, game_id)
    print("held", row.state["n"], flush=True)
    sys.stdin.readline()
    storage.save_state(game_id, {"phase": "playing", "n": row.state["n"] + 1, "by": "other"}, db)
    storage.notify(db, game_id)
print("committed", flush=True)
"""


def _other(url: str, game_id: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", OTHER, url, game_id], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_a_locked_game_is_skipped_and_its_change_is_heard_by_the_other_process(postgres_url):
    storage = Storage(postgres_url)
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "playing", "n": 0})
    heard: list[str] = []
    got = threading.Event()
    listener = storage.listen(lambda game_id: (heard.append(game_id), got.set()))
    try:
        assert listener.ready.wait(10)
        other = _other(postgres_url, game.id)
        assert other.stdout.readline().split() == ["held", "0"]
        # The other process judges this game: this one skips it instead of waiting.
        with storage.transaction() as db:
            assert storage.lock_game(db, game.id, wait=False) is None
        started = time.monotonic()
        other.stdin.write("go\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "committed"
        assert other.wait(30) == 0
        assert got.wait(10) and heard == [game.id]
        assert time.monotonic() - started < 10
        with storage.transaction() as db:
            row = storage.lock_game(db, game.id, wait=False)
        assert row.state == {"phase": "playing", "n": 1, "by": "other"}
    finally:
        listener.close()
        storage.close()


def test_a_change_that_rolls_back_is_not_heard_nor_a_process_own_change(postgres_url):
    storage, other = Storage(postgres_url), Storage(postgres_url)  # two processes' storages
    game = storage.create_game({"players": ["Ann", "Ben"]}, {"phase": "setup"})
    heard: list[str] = []
    listener = storage.listen(heard.append)
    try:
        assert listener.ready.wait(10)
        storage.save_state(game.id, {"phase": "setup", "by": "this process"})
        try:
            with other.transaction() as db:
                other.notify(db, game.id)
                raise RuntimeError("the write failed")
        except RuntimeError:
            pass
        with other.transaction() as db:
            other.notify(db, "after")  # delivered in order: once heard, the first was not
        deadline = time.monotonic() + 10
        while "after" not in heard and time.monotonic() < deadline:
            time.sleep(0.05)
        assert heard == ["after"]
    finally:
        listener.close()
        storage.close()
        other.close()


def test_health_can_tell_whether_the_database_answers(postgres_server, postgres_url):
    storage = Storage(postgres_url)
    assert storage.reachable()
    postgres_server.drop_database(postgres_url)
    assert not storage.reachable()
    storage.close()


def test_a_lost_listening_connection_is_made_again_and_says_so(postgres_url):
    from sqlalchemy import create_engine, text

    storage, other = Storage(postgres_url), Storage(postgres_url)
    heard: list[str] = []
    again = threading.Event()
    listener = storage.listen(heard.append, on_reconnect=again.set)
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    try:
        assert listener.ready.wait(10)
        with admin.connect() as db:  # the database server drops the listening connection
            ended = db.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN %' AND datname = current_database() "
                "AND pid <> pg_backend_pid()")).scalars().all()
        assert ended == [True]
        assert again.wait(10), "the listener did not say it listens again"
        other.save_state(other.create_game({"players": ["A", "B"]}, {"phase": "setup"}).id,
                         {"phase": "setup", "n": 1})
        deadline = time.monotonic() + 10
        while not heard and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(heard) == 1  # and it hears again
    finally:
        admin.dispose()
        listener.close()
        storage.close()
        other.close()


class _Tracker:
    """Records what the frame hub tells a camera's tracker."""

    def __init__(self):
        self.told: list[str] = []

    def commit(self):
        self.told.append("commit")

    def reset(self):
        self.told.append("reset")


def test_a_camera_tracker_hears_of_turns_and_rounds_made_by_another_process(postgres_url):
    """The camera is on this process; the game is changed through another one (only the
    game's id travels: what happened is read from the database)."""
    from app.server.frames import FrameHub
    from app.server.games import GameService

    here, there = Storage(postgres_url), Storage(postgres_url)
    service, other = GameService(here, None), GameService(there, None)
    hub = FrameHub(service, None)
    heard = []
    service.listeners.append(lambda game_id, what: heard.append(what))
    listener = here.listen(service.heard)

    def after(count: int) -> None:
        deadline = time.monotonic() + 5
        while len(heard) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(heard) >= count, "the other process's change was not heard"

    try:
        assert listener.ready.wait(10)
        game = service.create(["Ann", "Ben"])
        gf = hub._frames(game.id)  # the camera streams here
        gf.tracker = _Tracker()
        other.start_round(game.id)  # a round started there: this camera's tracks go
        after(1)
        assert gf.tracker.told == ["reset"]
        turn = other.view(game.id)["round"]["turn"]
        other.end_turn(game.id, meant=turn["id"])  # a pass: not legal, the table stands
        after(2)
        assert gf.tracker.told == ["reset"]
        # A legal turn judged there (its state as the judging leaves it): committed here.
        state = there.game(game.id).state
        state["turn_count"] += 1
        state["last_verdict"]["legal"] = True
        there.save_state(game.id, state)
        after(3)
        assert gf.tracker.told == ["reset", "commit"]
        other.end_round(game.id, "Ann", {"Ben": "R5"})
        other.start_round(game.id)
        after(5)
        assert gf.tracker.told == ["reset", "commit", "reset"]
    finally:
        listener.close()
        here.close()
        there.close()


def test_a_reading_stored_elsewhere_reaches_the_sockets_here_even_if_the_table_is_set_again(
        postgres_url):
    """A camera on another process stores a reading, and a turn judged at once after it
    (time ran out: the turn is taken back) sets the table again before this process reads
    the game: its sockets still get that reading as such, then the game changed."""
    import asyncio

    from app.server.frames import FrameHub
    from app.server.games import GameService
    from tests.test_tracker import SET_A, tiles_at

    here, there = Storage(postgres_url), Storage(postgres_url)
    service, other = GameService(here, None), GameService(there, None)
    hub = FrameHub(service, None)
    listener = here.listen(service.heard)

    async def watch(game_id: str) -> list[dict]:
        queue: asyncio.Queue = asyncio.Queue(maxsize=16)
        hub.subscribe(game_id, queue)  # a live socket here

        def stored_then_taken_back() -> int:
            reading = other.store_reading(game_id, tiles_at(SET_A), 1000, 750, None, "frame",
                                          view="camera:there")
            turn = other.view(game_id)["round"]["turn"]
            verdict = other.end_turn(game_id, timed_out=True, meant=turn["id"])
            assert verdict["penalty"] and verdict["after_reading"] == reading["reading_id"]
            assert there.game(game_id).state["latest_reading"] is None  # taken back
            return reading["reading_id"]

        reading_id = await asyncio.to_thread(stored_then_taken_back)
        messages: list[dict] = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(
                m.get("what") == "turn-rejected" for m in messages):
            try:
                messages.append(await asyncio.wait_for(queue.get(), 0.5))
            except TimeoutError:
                pass
        return reading_id, messages

    try:
        assert listener.ready.wait(10)
        game = service.create(["Ann", "Ben"])
        service.start_round(game.id)
        reading_id, messages = asyncio.run(watch(game.id))
        kinds = [(m["type"], m.get("what") or m.get("reading", {}).get("reading_id"))
                 for m in messages]
        assert ("reading", reading_id) in kinds, kinds
        at = kinds.index(("reading", reading_id))
        read = messages[at]
        assert read["changed"] and read["stable"] and len(read["reading"]["tiles"]) == 3
        # Told before the turn that set the table again.
        assert ("game-changed", "turn-rejected") in kinds[at:], kinds
    finally:
        listener.close()
        here.close()
        there.close()
