"""The server's messages as ids with parameters, next to the English words the API and the
CLI keep: the page words an id in its player's language (app/static/i18n/*.json, keys
"server.<id>"; tests/test_page_i18n.py fails when a catalogue lacks one of these ids).

A template's `{name}` parameters are plain values; `tile`/`tiles` hold tile codes, which
the page says as words ("red 7").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.reasons import REASON_IDS

ENGLISH: dict[str, str] = {
    # turns and rounds refused at the wrong moment (409)
    "turn.none": "no turn is running: start a round first",
    "turn.counting": "the round is over: the racks are being counted",
    "turn.already_paused": "the timer is already paused",
    "turn.already_running": "the timer is already running",
    "turn.no_timer": "this game plays without a timer",
    "turn.no_extensions": "no extensions left for this turn",
    "turn.not_over": "the turn is not over",
    "turn.ended": "{player}'s turn has already ended",
    "turn.round_over": "that turn has already ended: its round is over",
    "turn.not_running": "that is not the turn being played now",
    "round.playing": "a round is being played; end it first (round/end)",
    "round.finished": "the game is finished",
    "round.none": "no round is being played",
    "round.already_counting": "the racks are already being counted",
    "round.not_counting": "the round is not being counted: play goes on",
    "round.playing_short": "a round is being played",
    "table.none": "no table reading to correct yet",
    # the camera
    "camera.taken_by_phone": "Another phone took over the camera: a table is read by one "
                             "camera at a time, so this phone's camera has stopped.",
    "camera.taken_by_watch": "The webcam of `rummikub watch` took over the camera: a table is "
                             "read by one camera at a time, so this phone's camera has "
                             "stopped.",
    # rack photos
    "rack.low_confidence": "{count} tiles read with low confidence: check them",
    "rack.edge": "{count} tiles at the photo's edge: the edge may cut them or hide more; "
                 "photograph the whole rack",
    "rack.off_rack": "{count} tiles lie off the rack: not counted ({tiles})",
    "rack.note": "{text}",
    # a photo or frame too poor to read (vision.recognition.quality): what to do
    "photo.unfit": "{words}",
    "quality.too_blurred": "too blurred: hold the phone still and take it again",
    "quality.too_dark": "too dark: turn on a light or move to a brighter spot and take it "
                        "again",
    "quality.overexposed": "overexposed: move out of the direct light or away from the flash "
                           "and take it again",
}


@dataclass(frozen=True)
class Message:
    """One message: its id, its parameters, and its English words."""

    id: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.id not in ENGLISH:
            raise KeyError(f"no message with id {self.id!r}")

    @property
    def english(self) -> str:
        return ENGLISH[self.id].format(**self.params)

    def json(self) -> dict:
        return {"id": self.id, "params": dict(self.params)}

    def __str__(self) -> str:
        return self.english


def say(message_id: str, **params) -> Message:
    return Message(message_id, params)


def all_ids() -> set[str]:
    """Every message id the server can send the page: its own and the referee's reasons."""
    return set(ENGLISH) | set(REASON_IDS)


def unfit_message(problems: list[str]) -> Message:
    """A photo too blurred, dark or overexposed: the quality gate's words, and each problem
    as an id ("too blurred" -> quality.too_blurred)."""
    from vision.recognition.quality import unfit_words

    return say("photo.unfit", words=unfit_words(problems),
               problems=[say("quality." + p.replace(" ", "_")).json() for p in problems])
