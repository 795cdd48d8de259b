"""Which camera films a game, and who took it over (issue #21, part 4): a page asks before
taking the camera (`frames/stats` says whether one streams, and which kind), and a phone
whose camera `rummikub watch` took over is told so by name, with a message id."""

from __future__ import annotations

from tests.live_helpers import FIRST_MELD, phone, read_frame, stats, taken, until_pong


def test_stats_say_whether_a_camera_films_and_which_kind(client, game):
    assert stats(client, game)["camera"] == {"streaming": False, "by": None}
    ann = phone(client, game, "ann-phone")
    try:
        read_frame(ann)
        assert stats(client, game)["camera"] == {"streaming": True, "by": "phone"}
        # `rummikub watch` posts frames without a camera name: the webcam takes over...
        response = client.post(f"/api/games/{game['id']}/frames", content=FIRST_MELD,
                               headers={"X-Token": game["token"], "content-type": "image/jpeg"})
        assert response.status_code == 202, response.text
        assert stats(client, game)["camera"] == {"streaming": True, "by": "watch"}
        # ... and the phone hears it named, in words and as an id the page words.
        [told] = taken(until_pong(ann))
        assert told["detail"].startswith("The webcam of `rummikub watch` took over")
        assert told["message_id"] == {"id": "camera.taken_by_watch", "params": {}}
        # Its next frame is refused with the same id.
        ann.send_bytes(FIRST_MELD)
        [again] = taken(until_pong(ann))
        assert again["message_id"]["id"] == "camera.taken_by_watch"
    finally:
        ann.__exit__(None, None, None)
