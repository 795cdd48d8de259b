"""How tests/data/db-v0.1.0.sqlite3 was made: a game played through release 0.1.0's server.

Run once at commit 42ac88e (release 0.1.0's storage.py, before SQLAlchemy and Alembic):
    PYTHONPATH=$PWD python tests/data/make_db_v0_1_0.py tests/data/db-v0.1.0.sqlite3
Its tables are that release's exactly; only the photos' bytes were shrunk afterwards (each
photo re-encoded small, so the file stays under 200 KB), which no column's type changes.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
from fastapi.testclient import TestClient

from tests.server_helpers import (
    GROUP_9S,
    RUN_B1_B4,
    RUN_O7_O10,
    RUN_R2_R5,
    make_app,
    sample_bytes,
    table_photo,
)


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp))
        with TestClient(app) as client:
            table = {"X-Token": app.state.table_token}
            game = client.post("/api/games", json={"players": ["Ann", "Ben"]},
                               headers=table).json()
            gid, h = game["id"], {"X-Token": game["token"]}

            def photo(route, jpeg, **extra):
                files = {"photo": ("t.jpg", jpeg, "image/jpeg")}
                r = client.post(f"/api/games/{gid}/{route}", headers=h, files=files, **extra)
                assert r.status_code == 200, r.text
                return r.json()

            photo("start-draw", table_photo(({"O7"}, RUN_O7_O10[1]), ({"B4"}, RUN_B1_B4[1])))
            assert client.post(f"/api/games/{gid}/rounds", headers=h).status_code == 200
            photo("photo", table_photo(RUN_R2_R5, GROUP_9S))
            assert client.post(f"/api/games/{gid}/turn/end", headers=h).status_code == 200
            assert client.post(f"/api/games/{gid}/turn/end", headers=h).status_code == 200
            reading = photo("photo", table_photo(RUN_R2_R5, GROUP_9S, RUN_O7_O10))
            o7 = next(t["id"] for t in reading["tiles"] if t["color"] == "orange"
                      and t["number"] == 7)
            r = client.post(f"/api/games/{gid}/corrections", headers=h,
                            json={"tile_id": o7, "code": "O7"})
            assert r.status_code == 200, r.text
            assert client.post(f"/api/games/{gid}/turn/end", headers=h).status_code == 200
            photo("racks", sample_bytes("rack_marble.jpg"), data={"player": "Ben"})
            r = client.post(f"/api/games/{gid}/round/end", headers=h,
                            json={"winner": "Ann", "racks": {"Ben": "R5 J K13"}})
            assert r.status_code == 200, r.text
            # A second game, still in setup.
            client.post("/api/games", json={"players": ["Cy", "Di", "Ed"]}, headers=table)
        src = Path(tmp) / "rummikub.sqlite3"
        db = sqlite3.connect(src)
        for pid, data in db.execute("SELECT id, data FROM photos").fetchall():
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            small = cv2.resize(image, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
            ok, jpeg = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 60])
            db.execute("UPDATE photos SET data=? WHERE id=?", (jpeg.tobytes(), pid))
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode=DELETE")
        out.unlink(missing_ok=True)
        db.execute("VACUUM INTO ?", (str(out),))
        db.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
