"""The server's messages as ids with parameters, next to the English words the API and the
CLI keep: the page words an id in its player's language (app/static/i18n/*.json, keys
"server.<id>"; tests/test_page_i18n.py fails when a catalogue lacks one of these ids).

A template's `{name}` parameters are plain values; `tile`/`tiles` hold tile codes, which
the page says as words ("red 7").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from referee.reasons import REASON_IDS
from vision.game.checks import CHECK_IDS

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
    "rack.maybe_covered": "something skin-coloured lies beside the rack (a hand?): if it "
                          "hides tiles, move it and take the photo again",
    "rack.covered": "something covers part of the rack (a hand?): move it and take the "
                    "photo again",
    "rack.upright": "photographed upright with tiles lying by: check which tiles are "
                    "counted; a rack reads best with the phone held sideways, the rack "
                    "filling the photo",
    "rack.empty": "no tile found on the rack: if it holds tiles, photograph it again, the "
                  "whole rack in the photo",
    "rack.note": "{text}",
    # a photo or frame too poor to read (vision.recognition.quality): what to do
    "photo.unfit": "{words}",
    "quality.too_blurred": "too blurred: hold the phone still and take it again",
    "quality.too_dark": "too dark: turn on a light or move to a brighter spot and take it "
                        "again",
    "quality.overexposed": "overexposed: move out of the direct light or away from the flash "
                           "and take it again",
    # a photo with a hand over its tiles (vision.game.cover): never judged
    "photo.covered": "something covers part of the table (a hand?): move it and take the "
                     "photo again",
    # refusals with their words in every language (tokens, uploads, setup, tournaments)
    "game.not_found": "no game with id {game}",
    "settings.invalid": "settings.{key}: {error}",
    "players.count": "players: 2 to 6 names, in seating order",
    "players.same_name": "players: every player needs a different name",
    "timer.seconds": "timer.seconds: {error}",
    "timer.extensions": "timer.extensions: 0 or more, each lasting more than 0 seconds",
    "round.starter_unknown": "starter {starter} is not one of the players: {players}",
    "score.rack_unknown": "racks: {player} is not one of the players",
    "score.winner_unknown": "winner {winner} is not one of the players",
    "score.no_winner": "name the winner (who laid their last tile), or say the pool is empty "
                       "(pool_empty: true)",
    "score.rack_missing": "racks: {player}'s rack is missing (give its tile codes, or \"\" for an "
                          "empty rack)",
    "score.rack_invalid": "racks.{player}: {error}",
    "photo.no_reading": "no reading of photo {photo} in this game",
    "photo.not_found": "no photo {photo} in this game",
    "table.no_reading": "no table reading yet: send a photo or camera frames",
    "correction.code": "code: {error}",
    "correction.tile_id": "tile_id: the latest reading has tiles 0 to {last}, not {tile_id}",
    "correction.unreadable": "code: {tile} is not a tile the camera can read",
    "rack.codes": "codes: {error}",
    "rack.player_unknown": "player {player} is not one of the players: {players}",
    "tournament.not_found": "no tournament with id {tournament}",
    "tournament.timer": "timer: one of {presets}, not {timer}",
    "tournament.format": "format: {error}",
    "tournament.players": "players: each a different, non-empty name",
    "tournament.registration_closed": "round 1 is seated: players register before the first round",
    "tournament.registered": "{player} is registered already; nothing was added",
    "tournament.format_fixed": "round 1 is seated: the format is fixed for this tournament",
    "tournament.round_seated": "round {round} is already seated; nothing changed",
    "tournament.round_not_next": "round {due} is the next to seat, not round {round}",
    "tournament.too_many_rounds": "the {format} format has {rounds} rounds",
    "tournament.round_not_over": "round {round} is not over: {missing}",
    "tournament.seating": "seating: {error}",
    "tournament.no_table": "round {round} has no table {table}",
    "tournament.no_turn": "round {round} table {table} has no judged turn {turn}",
    "finals.none": "the {format} format has no finals",
    "finals.stage": "stage: one of {stages}, not {stage}",
    "finals.semis_seated": "the semi-finals are seated already; nothing changed",
    "finals.final_seated": "the final is seated already; nothing changed",
    "finals.too_early": "the finals come after the {rounds} qualifying rounds: {seated} of {rounds} are seated",
    "finals.semis_first": "the semi-finals come first",
    "finals.semis_not_over": "the semi-finals are not over: {missing}",
    "finals.too_few": "finals of {size} need {size} ranked players, not {count}",
    "finals.decided": "the match at the final is decided: {player} has {wins} wins; no further game counts",
    "finals.games_played": "this table has played its {games} games; no further game counts",
    "override.no_reason": "an override needs a reason: say why, it goes in the audit log",
    "override.kind": "kind: one of {kinds}, not {kind}",
    "referee.no_tournament": "this table is not in a tournament: there is no referee to call",
    "referee.called": "the referee is called already and on the way",
    "referee.no_answer": "answer: say what the referee decided",
    "referee.answered": "call {call} is answered already, or there is no such call",
    "archive.schema": "not a tournament archive: its \"schema\" must be {schema}",
    "archive.tables": "a tournament archive has a list of rows for each of: {tables}",
    "archive.one": "a tournament archive holds exactly one tournament",
    "archive.columns": "{table}: each row has the columns {columns}",
    "archive.taken": "this server already holds part of this tournament (the same "
                     "tournament, game or reading ids): import into an empty server; "
                     "nothing was stored",
    "archive.rows": "the archive's rows do not fit: {error}",
    "archive.not_json": "the archive is not JSON: send the file GET .../archive gave",
    "token.table_missing": "this needs the table token (X-Token header or ?token=): open the "
                           "link the server printed",
    "token.table_wrong": "wrong table token",
    "token.game_missing": "this game needs its token (X-Token header or ?token=)",
    "token.game_wrong": "wrong token for this game",
    "token.read_only": "the watch link is read-only: only the table's link can change the "
                       "game",
    "token.tournament_missing": "this needs the tournament's token (X-Token header or ?token=)",
    "token.tournament_wrong": "wrong token for this tournament",
    "token.screen_read_only": "the big screen's link is read-only: this needs the director's token",
    "upload.not_image": "a photo must be sent as an image (image/jpeg, image/png, ...), not "
                        "{kind}",
    "upload.too_large": "photo too large: {size} bytes (limit {limit})",
    "upload.too_many_pixels": "photo too large: {error}",
    "upload.no_field": "send the photo as a multipart file field named 'photo'",
    "upload.not_multipart": "send the photo as a multipart form with a file field named 'photo'",
    "upload.form_unreadable": "the multipart form could not be read",
    "upload.rack_how": "send JSON {{\"player\", \"codes\"}} or a multipart form with 'player' "
                       "and 'photo'",
    "upload.rack_player": "player: give the player's name",
    "server.busy": "the server is busy decoding other photos: try again",
    "frame.empty": "empty frame: no image bytes were sent",
    "frame.too_large": "frame too large: {size} bytes",
    "sample.not_found": "no sample photo {name}",
    "request.too_large": "request too large: {size} bytes ({limit})",
    "request.bad_length": "Content-Length is not a number",
    "request.not_json": "the body is not valid JSON",
    "request.not_json_because": "the body is not valid JSON ({error})",
    "request.invalid": "{field}: {problem}",
    "request.no_body": "body: a JSON body is required",
    "request.invalid_other": "invalid request",
    "request.turn_id": "turn_id: required, the id of the turn this is meant for "
                       "(round.turn.id in the game view), as JSON {{\"turn_id\": \"...\"}}",
    "storage.full": "the server's disk is full: this was not stored, and nothing else "
                    "changed; free space on the server and send it again",
    "server.failed": "the server failed on this request; the game is unchanged",
    "request.over_limit": "request too large: {limit}",
    "photo.corrupt": "corrupt photo: {why}",
    "photo.not_image": "not an image: {why}",
    "photo.empty": "empty photo: {why}",
    "photo.not_read": "{error}",
    "edition.refused": "{error}",
    "score.refused": "{error}",
    "start.refused": "{error}",
    "tournament.seating_refused": "{error}",
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
    """Every message id the server can send the page: its own, the referee's reasons and
    what a turn's verdict asks to check."""
    return set(ENGLISH) | set(REASON_IDS) | set(CHECK_IDS)


# A photo refused by vision.recognition.decode: the id its words begin with, the rest English.
PHOTO_PREFIXES = {"corrupt photo: ": ("photo.corrupt", "why"),
                  "photo too large: ": ("upload.too_many_pixels", "error"),
                  "not an image: ": ("photo.not_image", "why"),
                  "empty photo: ": ("photo.empty", "why")}


def photo_message(words: str) -> Message:
    """A decode error's English words as a message ("corrupt photo: ..." -> photo.corrupt)."""
    for prefix, (message_id, param) in PHOTO_PREFIXES.items():
        if words.startswith(prefix):
            return say(message_id, **{param: words[len(prefix):]})
    return say("photo.not_read", error=words)


def unfit_message(problems: list[str]) -> Message:
    """A photo too blurred, dark or overexposed: the quality gate's words, and each problem
    as an id ("too blurred" -> quality.too_blurred)."""
    from vision.recognition.quality import unfit_words

    return say("photo.unfit", words=unfit_words(problems),
               problems=[say("quality." + p.replace(" ", "_")).json() for p in problems])
