"""A hall on two server processes sharing one PostgreSQL database: is every change seen
everywhere, and is no turn judged twice? Correctness, not speed.

    python -m bench.hall_two_bench [--tables 4] [--fps 2] [--seconds 60] [--turn 4]
                                   [--db postgresql://...] [--json OUT]

Starts two `rummikub serve` processes (A and B) on one database (`--db`, else a PostgreSQL
of its own in a temporary folder, as the tests make one: Debian's `postgresql` package).
Each table's phone streams its camera (real photos of `valid/`, as `bench.hall_bench`:
one tile moved and back once every 20 s at the table's own second) over the live socket of
one process (tables alternate between A and B); a watching phone (watch token) listens on
the other process. Every game has a turn timer of `--turn` seconds, so turns run out all
the time and both processes' ticks race to judge them; meanwhile a referee's phone ends
turns by hand, each time through a process picked at random, with the turn id it read
from the other one.

Reported: stable camera changes stored by the phone's process, and how many of them the
watcher on the other process saw (a `reading` message with that reading, or a `game`
message whose table it is), with the delay from the phone's `changed` message (p50 / p95);
of those not seen (must be 0), how many were the table for under 0.3 s because a turn was
judged right after (a timeout sets the table back; the other process is told the reading's
id, so it pushes that reading as such rather than the table as it is by the time it reads
the game); turns judged (timed out / by hand),
duplicates in any history (a turn number twice: must be 0), gaps, hand ends answered 200
that are missing from the history (must be 0), 5xx answers, and the lines the servers
logged about failed judging.

Not part of the test suite (about 1.5 minutes with the defaults).
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import bench_parser, save_json
from bench.hall_bench import pictures
from bench.serve_bench import ROOT, free_port, start_server

CHANGE_EVERY = 20.0
# A reading not seen elsewhere is explained when a turn judged this soon after it set the
# table again (a timeout sets it back) before the watcher's process read the game.
SUPERSEDED_S = 0.3


def start(data_dir: Path, port: int, db: str, log: Path) -> subprocess.Popen:
    return start_server(data_dir, port, extra=("--db", db), log=log, wait_s=180)


class Table:
    def __init__(self, number: int, game: dict, frames, phone_port: int, watch_port: int):
        self.number, self.game, self.frames = number, game, frames
        self.phone_port, self.watch_port = phone_port, watch_port
        self.offset = CHANGE_EVERY * number / 7.0 % CHANGE_EVERY
        self.stored: dict[int, float] = {}  # reading id -> when the phone heard it stable
        self.seen: dict[int, float] = {}  # reading id -> when the watcher saw it
        # reading id -> when it was stored (the server's wall clock, as turns' "at")
        self.stored_wall: dict[int, float] = {}

    def picture(self, t: float, k: int) -> bytes:
        done = int(max(0.0, t - 5.0 - self.offset) // CHANGE_EVERY)
        return self.frames[done % 2][k % len(self.frames[done % 2])]

    async def phone(self, fps: float, seconds: float, began: float) -> None:
        from websockets.asyncio.client import connect

        url = (f"ws://127.0.0.1:{self.phone_port}/api/games/{self.game['id']}/live"
               f"?token={self.game['token']}&camera=phone{self.number}")
        async with connect(url, max_size=None) as ws:
            async def receive():
                async for raw in ws:
                    if '"changed":true' in raw:
                        message = json.loads(raw)
                        stored = message.get("reading") or {}
                        if message.get("type") == "reading" and message.get("changed") \
                                and stored.get("reading_id"):
                            self.stored.setdefault(stored["reading_id"], time.perf_counter())
                            self.stored_wall.setdefault(stored["reading_id"],
                                                        stored.get("stable_since") or 0.0)
            receiver = asyncio.create_task(receive())
            k = 0
            while time.perf_counter() - began < seconds:
                await ws.send(self.picture(time.perf_counter() - began, k))
                k += 1
                await asyncio.sleep(max(0.0, began + k / fps - time.perf_counter()))
            await asyncio.sleep(3.0)
            receiver.cancel()

    async def watcher(self, seconds: float) -> None:
        from websockets.asyncio.client import connect

        url = (f"ws://127.0.0.1:{self.watch_port}/api/games/{self.game['id']}/live"
               f"?token={self.game['watch_token']}")
        async with connect(url, max_size=None) as ws:
            async def receive():
                async for raw in ws:
                    message = json.loads(raw)
                    # A reading stored on the phone's process comes as such (a `reading`
                    # message, as that process's own sockets get it), and the game as it
                    # is when this process reads it (`game`, its table).
                    if message.get("type") == "reading":
                        table = message.get("reading") or {}
                    else:
                        table = (message.get("game") or {}).get("table") or {}
                    if message.get("type") in ("reading", "game") and table.get("reading_id"):
                        self.seen.setdefault(table["reading_id"], time.perf_counter())
            try:
                await asyncio.wait_for(receive(), seconds + 3.0)
            except TimeoutError:
                pass


async def referee(bases: list[str], tables: list[Table], seconds: float, began: float,
                  acknowledged: list, answers: dict) -> None:
    """Ends a turn of a random table every 0.5 s, reading it on one process and ending it
    on another (picked at random)."""
    import httpx

    rng = random.Random(7)
    async with httpx.AsyncClient(timeout=60) as http:
        while time.perf_counter() - began < seconds:
            table = rng.choice(tables)
            h = {"X-Token": table.game["token"]}
            read_on, end_on = rng.sample(bases, 2) if rng.random() < 0.5 else [bases[0]] * 2
            try:
                view = (await http.get(f"{read_on}/api/games/{table.game['id']}",
                                       headers=h)).json()
                turn = (view.get("round") or {}).get("turn")
                if turn:
                    answer = await http.post(
                        f"{end_on}/api/games/{table.game['id']}/turn/end", headers=h,
                        json={"turn_id": turn["id"]})
                    answers[answer.status_code] = answers.get(answer.status_code, 0) + 1
                    if answer.status_code == 200:
                        acknowledged.append((table.game["id"], answer.json()["turn"]))
            except httpx.TransportError as error:
                # A keep-alive connection the server closed as idle (uvicorn: after 5 s)
                # just as this request went out: counted, never acknowledged, and on.
                kind = f"transport error ({type(error).__name__})"
                answers[kind] = answers.get(kind, 0) + 1
            await asyncio.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.hall_two_bench", __doc__)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--turn", type=float, default=4.0, help="turn timer, seconds")
    parser.add_argument("--db", help="a PostgreSQL URL (default: a temporary server)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    import httpx

    try:
        frames = pictures(args.tables)
    except (FileNotFoundError, OSError) as error:
        print(f"hall_two_bench: needs the real photos (RUMMIKUB_DATA): {error}",
              file=sys.stderr)
        return 2
    pg = None
    if args.db is None:
        sys.path.insert(0, str(ROOT))
        from tests.pg_server import PostgresServer, pg_bin

        if pg_bin() is None:
            print("hall_two_bench: give --db, or install postgresql", file=sys.stderr)
            return 2
        pg = PostgresServer(pg_bin()).start()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or pg.new_database()
        ports = [free_port(), free_port()]
        logs = [Path(tmp) / "a.log", Path(tmp) / "b.log"]
        servers = []
        try:
            for k in (0, 1):  # one after the other: the first migrates the database
                servers.append(start(Path(tmp) / f"data{k}", ports[k], db, logs[k]))
            from app.server.storage import Storage

            storage = Storage(db)
            token = storage.table_token()
            storage.close()
            bases = [f"http://127.0.0.1:{p}" for p in ports]
            tables = []
            for n in range(args.tables):
                game = httpx.post(bases[n % 2] + "/api/games", headers={"X-Token": token},
                                  json={"players": ["Ann", "Ben", "Cat"],
                                        "timer": {"enabled": True, "seconds": args.turn}}
                                  ).json()
                httpx.post(f"{bases[(n + 1) % 2]}/api/games/{game['id']}/rounds",
                           headers={"X-Token": game["token"]}).raise_for_status()
                tables.append(Table(n, game, frames[n], ports[n % 2], ports[(n + 1) % 2]))
            acknowledged, answers = [], {}

            async def run():
                began = time.perf_counter() + 1.0
                await asyncio.gather(*(t.watcher(args.seconds) for t in tables),
                                     *(t.phone(args.fps, args.seconds, began) for t in tables),
                                     referee(bases, tables, args.seconds, began, acknowledged,
                                             answers))
            asyncio.run(run())
            histories = {t.game["id"]: httpx.get(
                f"{bases[0]}/api/games/{t.game['id']}/history",
                headers={"X-Token": t.game["token"]}).json()["turns"] for t in tables}
            exited = [server.poll() for server in servers]  # None: still serving
        finally:
            for server in servers:
                server.terminate()
                server.wait(20)
        failed_lines = sum(log.read_text().count("judging the timed-out turn") +
                           log.read_text().count("unexpected error") for log in logs)
        if pg is not None:
            pg.stop()

    stored = sum(len(t.stored) for t in tables)
    delays = [t.seen[r] - at for t in tables for r, at in t.stored.items() if r in t.seen]
    duplicates = gaps = timed_out = 0
    for turns in histories.values():
        numbers = [v["turn"] for v in turns]
        duplicates += len(numbers) - len(set(numbers))
        gaps += len(set(range(1, max(numbers, default=0) + 1)) - set(numbers))
        timed_out += sum(1 for v in turns if v["timed_out"])
    judged = {(g, v["turn"]) for g, turns in histories.items() for v in turns}
    # A reading the watcher never saw: was it the table for less than the watcher needs to
    # read it, a turn judged at once after it (which set the table back, or on)?
    def next_turn_after(t: Table, r: int) -> float:
        """Seconds from storing reading `r` to the next turn judged (its table set)."""
        return round(min((v["at"] - t.stored_wall[r] for v in histories[t.game["id"]]
                          if v["at"] >= t.stored_wall[r]), default=float("inf")), 3)

    missed = [(t, r) for t in tables for r in t.stored if r not in t.seen]
    gaps_after = [next_turn_after(t, r) for t, r in missed]
    superseded = sum(1 for g in gaps_after if g <= SUPERSEDED_S)
    # Every stored reading a turn set the table again right after: the race itself, seen
    # or not (before readings were told by id, these were the ones the watcher missed).
    raced = sum(1 for t in tables for r in t.stored if next_turn_after(t, r) <= SUPERSEDED_S)
    lost = [a for a in acknowledged if a not in judged]
    p = (lambda q: round(float(np.percentile(delays, q)), 3)) if delays else (lambda q: None)
    result = {
        "tables": args.tables, "fps": args.fps, "seconds": args.seconds, "turn_s": args.turn,
        "changes_stored": stored, "changes_seen_on_other_process": len(delays),
        "seen_delay_p50_s": p(50), "seen_delay_p95_s": p(95),
        "not_seen": len(missed), "not_seen_next_turn_judged_after_s": gaps_after,
        "not_seen_a_turn_judged_within": superseded,
        "stored_with_a_turn_judged_within": raced,
        "turns_judged": len(judged), "timed_out": timed_out,
        "ended_by_hand": answers.get(200, 0), "hand_ends_refused_409": answers.get(409, 0),
        "answers": answers, "duplicate_turns": duplicates, "gaps": gaps,
        "acknowledged_missing": len(lost), "failed_judging_log_lines": failed_lines,
        "servers_exited_early": [code for code in exited if code is not None],
    }
    print(f"hall_two_bench: {args.tables} tables on 2 processes, {args.fps:g} frames/s, "
          f"turns of {args.turn:g} s, {args.seconds:g} s")
    print(f"  camera changes stored {stored}, seen by the watcher on the other process "
          f"{len(delays)} (delay p50 {result['seen_delay_p50_s']} s, "
          f"p95 {result['seen_delay_p95_s']} s); not seen {len(missed)}, a turn judged "
          f"that many seconds after each: {gaps_after} (the table set again before the "
          f"watcher read it); of all stored, {raced} had a turn judged within "
          f"{SUPERSEDED_S:g} s after")
    print(f"  turns judged {len(judged)} ({timed_out} timed out, {answers.get(200, 0)} by "
          f"hand, {answers.get(409, 0)} hand ends refused 409); duplicates {duplicates}, "
          f"gaps {gaps}, acknowledged but missing {len(lost)}, answers {answers}, failed "
          f"judging in the logs {failed_lines}")
    save_json(result, args.json)
    if any(code is not None for code in exited):
        print(f"  a server process exited during the run: {exited}")
    ok = (duplicates == 0 and not lost and gaps == 0 and not missed
          and all(code is None for code in exited))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
