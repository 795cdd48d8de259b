"""Pydantic models of the API: what each route takes and gives (the OpenAPI at /docs).

Inputs forbid unknown fields, so a typo gets a 422 naming it instead of being ignored.
Outputs allow extra fields: the page may read more than is described here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Code = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4)]
Codes = Annotated[str, StringConstraints(max_length=1000)]


def Count(low: int, high: int, words: str):  # noqa: N802 - reads as a type in the models
    """A whole number in [low, high]: strict, so `true` or `2.0` or "3" is a 422, and
    bounded, so a 4,300-digit number never reaches the referee's scoring."""
    return Annotated[int, Field(strict=True, ge=low, le=high, description=words)]


Seconds = Annotated[float, Field(strict=True, gt=0, le=3600)]  # strict: `true` is not 1 s


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


# ----------------------------------------------------------------------------- requests
class TimerIn(In):
    enabled: StrictBool = True
    seconds: Seconds | None = Field(None, description="turn length (default: the edition's, "
                                    "120 s)")
    extensions: Count(0, 20, "times per turn a player may ask for more time") = 0
    extension_seconds: Annotated[float, Field(strict=True, gt=0, le=600)] | None = Field(
        None, description="what one extension adds (30 s)")


class RuleSettings(In):
    """RULES.md §10 settings overridden (`referee.Rules`), by name with `_` or `-`. Every
    value has its type and range: a number where a yes/no belongs is a 422 naming it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True,
                              alias_generator=lambda name: name.replace("_", "-"))

    colors: Annotated[str, StringConstraints(max_length=40)] | Annotated[
        list[Annotated[str, StringConstraints(max_length=10)]], Field(max_length=5)] | None = \
        Field(None, description="3 to 5 colour slots: letters (KRBO) or words")
    copies: Count(1, 4, "copies of each numbered tile") | None = None
    jokers: Count(0, 8, "jokers in the box") | None = None
    initial_meld_minimum: Count(0, 200, "points the initial meld needs") | None = None
    table_play_in_initial_meld: StrictBool | None = None
    freed_joker: Literal["same-turn", "new-set-with-two-rack-tiles"] | None = None
    joker_freeing: Literal["tile-or-rearrange", "tile-from-rack"] | None = None
    joker_sets_splittable: StrictBool | None = None
    turn_seconds: Seconds | Literal["off"] | None = Field(
        None, description="turn length in seconds; null or \"off\" for no timer")
    timeout_penalty: Literal["loose-tiles", "restore-table"] | None = None
    timeout_draw: Count(0, 20, "tiles drawn when time is up") | None = None
    timeout_draw_when_valid: Count(0, 20, "... even when the table is valid") | None = None
    invalid_table_draw: Count(0, 20, "tiles drawn for an invalid table") | None = None
    empty_turn_draw: Count(0, 20, "tiles drawn when nothing is laid") | None = None
    rack_joker_penalty: Count(0, 100, "what a joker left on a rack counts") | None = None
    pool_empty_scoring: Literal["difference", "full"] | None = None

    def overrides(self) -> dict:
        """The settings given, by their `referee.Rules` names (null turn_seconds: off)."""
        out = self.model_dump(exclude_unset=True)
        if "turn_seconds" in out and out["turn_seconds"] in (None, "off"):
            out["turn_seconds"] = None
        return {k: v for k, v in out.items() if v is not None or k == "turn_seconds"}


class GameCreate(In):
    players: list[Name] = Field(..., min_length=2, max_length=6,
                                description="names in seating order")
    edition: Annotated[str, StringConstraints(max_length=40)] = "original"
    settings: RuleSettings = Field(default_factory=RuleSettings,
                                   description="RULES.md §10 settings overridden")
    timer: TimerIn | None = None


class RoundStart(In):
    starter: Name | None = None


TurnId = Annotated[str, StringConstraints(min_length=1, max_length=40)]
TURN_ID_WORDS = ("the id of the turn this is meant for (`round.turn.id` of the game view): a "
                 "call for a turn that has already ended is refused")


class TurnRef(In):
    """Names the turn a pause, resume or extension is meant for."""

    turn_id: TurnId = Field(..., description=TURN_ID_WORDS)


class TurnEnd(In):
    turn_id: TurnId = Field(..., description=TURN_ID_WORDS)
    photo_id: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        None, description="judge this photo's reading instead of the latest stable one")


class GoingOut(In):
    out: bool = Field(True, description="false: back to the table, the turn runs on")
    turn_id: int | str | None = Field(None, description="the turn the phone saw")


class Correction(In):
    tile_id: Count(0, 10_000, "the tile's id in the latest reading")
    code: Code


class RackCodes(In):
    player: Name
    codes: Codes | list[Code]


class RoundEnd(In):
    winner: Name | None = None
    racks: dict[Name, Codes | list[Code]] = Field(default_factory=dict, max_length=6)
    pool_empty: StrictBool = False


# ----------------------------------------------------------------------------- responses
class Problem(Out):
    detail: str


class Health(Out):
    ok: bool  # the models are loaded and the database answers
    models: bool
    version: str
    process: str = Field(description="this server process: host:pid (several may share "
                         "one PostgreSQL database)")
    database: str = Field(description="sqlite or postgresql")
    database_ok: bool = Field(description="whether the database answered just now")
    detail: str | None = None


class Edition(Out):
    name: str
    settings: dict


class TileOut(Out):
    id: int
    color: str | None
    number: int | None
    joker: bool
    corners: list[list[float]]
    confidence: float
    uncertain: bool


class SetOut(Out):
    tiles: list[int]
    valid: bool
    kind: str | None
    reasons: list[str]
    jokers: list[str]
    value: int


class Reading(Out):
    photo: str | None
    photo_id: str | None
    width: int
    height: int
    tiles: list[TileOut]
    sets: list[SetOut]
    loose: list[int]
    table_valid: bool
    suggestion: list[list[str]] | None
    warnings: list[str]
    # tiles at the photo's edge, which it may cut off (readings stored before it: none)
    edge_tiles: list[int] = Field(default_factory=list)
    reading_id: int | None = None
    stable_since: float | None = None
    # Where its pixels come from (one camera, or one photo): a correction holds by place
    # only in the view it was made in.
    view: str | None = None
    # Corrections made in another view that the tiles around them could not carry over.
    corrections_dropped: int = 0


class PlayerOut(Out):
    name: str
    seat: int
    melded: bool
    score_total: int


class TurnOut(Out):
    id: str = Field(description="names this turn in turn/end, pause, resume and extend")
    number: int
    player: str
    started_at: float
    deadline: float | None = Field(None, description="server clock (unix seconds) when time "
                                   "runs out; null while paused or without a timer")
    remaining_s: float | None
    paused: bool
    extensions_used: int


class RoundOut(Out):
    number: int
    starter: str
    turn: TurnOut | None
    counting: bool = Field(False, description="someone went out: the turn is stopped while "
                           "the racks are counted")


class SheetRound(Out):
    number: int
    winner: str | None
    scores: dict[str, int]


class Sheet(Out):
    players: list[str]
    rounds: list[SheetRound]
    totals: dict[str, int]
    leader: str | None


class Game(Out):
    id: str
    players: list[PlayerOut]
    edition: str
    settings: dict
    timer: dict
    state: Literal["setup", "playing", "round-over", "finished"]
    round: RoundOut | None
    table: Reading | None
    sheet: Sheet
    server_time: float
    token: str | None = Field(None, description="only for the holder of the game's token")
    watch_token: str | None = None


class TileBack(Out):
    id: int
    code: str
    corners: list[list[float]]


class Penalty(Out):
    tiles_back: list[TileBack]
    draw: int
    words: str


class TurnVerdict(Out):
    turn: int
    player: str
    legal: bool
    timed_out: bool
    played: list[str]
    left_table: list[str]
    meld_total: int | None
    first_meld_ok: bool
    problems: list[str]
    invalid_sets: list[dict] = Field(
        description="the sets this turn leaves invalid ({tiles, reasons}); a set already "
        "invalid before the turn and left as it was is in preexisting_invalid instead")
    preexisting_invalid: list[str] = Field(
        default_factory=list, description="the referee's words for sets already invalid "
        "before this turn and left as they were: said, not held against this player")
    draws: int
    penalty: Penalty | None
    time_used_s: float
    suggestion: list[list[str]] | None
    message: str
    check: list[str] = Field(default_factory=list, description="what to look at before "
                             "trusting the verdict (tiles hidden under a hand when the turn "
                             "ended, tiles at the edge of the view): in words")
    check_ids: list[dict] = Field(default_factory=list, description="`check` as message ids "
                                  "with parameters ({id, params}): the page words each in "
                                  "its player's language")
    hidden: list[str] = Field(default_factory=list, description="the tiles the live camera "
                              "did not see when the turn ended (under a hand): counted where "
                              "they lay")
    before_photo_id: str | None
    after_photo_id: str | None


class History(Out):
    turns: list[TurnVerdict]


class RackOut(Out):
    player: str
    tiles: list[str]
    rows: list[list[str]]
    total: int
    photo_id: str | None
    # what the reading doubts (low confidence, tiles at the photo's edge): check the total
    warnings: list[str] = Field(default_factory=list)
    warning_ids: list[dict] = Field(default_factory=list, description="the warnings as "
                                    "message ids with parameters (app/server/messages.py)")
    edge_tiles: list[int] = Field(default_factory=list)
    off_rack: list[str] = Field(default_factory=list, description="tiles lying on the table "
                                "beside or behind the rack: named, not counted")


class StartDrawOut(Out):
    tiles: list[str]
    starter: str | None
    ties: list[str]
    message: str


class FramesAccepted(Out):
    accepted: bool
    dropped: int


class FrameStats(Out):
    """Counted since the server started (kept while a game's tracker is let go)."""

    received: int
    read: int
    dropped: int
    bad: int
    refused: int = Field(0, description="frames too blurred, dark or overexposed to read "
                                         "(never the table)")
    changes: int
    takeovers: int = Field(0, description="times another camera took the game's camera over")
    still: int = Field(0, description="of the frames read, those that showed the table as "
                       "the last one the models read: the models did not run on them")


class GameSummary(Out):
    id: str
    players: list[str]
    state: str
    created_at: float
