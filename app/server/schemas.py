"""Pydantic models of the API: what each route takes and gives (the OpenAPI at /docs).

Inputs forbid unknown fields, so a typo gets a 422 naming it instead of being ignored.
Outputs allow extra fields: the page may read more than is described here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Code = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4)]
Codes = Annotated[str, StringConstraints(max_length=1000)]
SettingValue = int | float | bool | Annotated[str, StringConstraints(max_length=40)] | \
    list[Annotated[str, StringConstraints(max_length=10)]] | None


class In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


# ----------------------------------------------------------------------------- requests
class TimerIn(In):
    enabled: bool = True
    seconds: float | None = Field(None, gt=0, le=3600, description="turn length (default: "
                                  "the edition's, 120 s)")
    extensions: int = Field(0, ge=0, le=20, description="times per turn a player may ask "
                            "for more time")
    extension_seconds: float | None = Field(None, gt=0, le=600,
                                            description="what one extension adds (30 s)")


class GameCreate(In):
    players: list[Name] = Field(..., min_length=2, max_length=6,
                                description="names in seating order")
    edition: Annotated[str, StringConstraints(max_length=40)] = "original"
    settings: dict[Annotated[str, StringConstraints(max_length=40)], SettingValue] = Field(
        default_factory=dict, max_length=30, description="RULES.md §10 settings overridden")
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


class Correction(In):
    tile_id: int = Field(..., ge=0, le=10_000)
    code: Code


class RackCodes(In):
    player: Name
    codes: Codes | list[Code]


class RoundEnd(In):
    winner: Name | None = None
    racks: dict[Name, Codes | list[Code]] = Field(default_factory=dict, max_length=6)
    pool_empty: bool = False


# ----------------------------------------------------------------------------- responses
class Problem(Out):
    detail: str


class Health(Out):
    ok: bool
    models: bool
    version: str


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
    edge_tiles: list[int] = Field(default_factory=list)


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
    changes: int
    takeovers: int = Field(0, description="times another camera took the game's camera over")


class GameSummary(Out):
    id: str
    players: list[str]
    state: str
    created_at: float
