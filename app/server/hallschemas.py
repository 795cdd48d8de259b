"""Pydantic models of the tournament hall's API (inputs forbid unknown fields)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from app.server.schemas import In, Name

Words = Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)]
Switch = int | bool | Annotated[str, StringConstraints(max_length=40)] | list[int | str] | dict


class TournamentCreate(In):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                           max_length=80)]
    format: Annotated[str, StringConstraints(max_length=40)] = "club"
    switches: dict[Annotated[str, StringConstraints(max_length=40)], Switch] = Field(
        default_factory=dict, max_length=20,
        description="single format switches overridden (referee.tournament.Format)")
    timer: Literal["40s", "1min", "2min"] = "1min"


class Players(In):
    players: list[Name] = Field(..., min_length=1, max_length=400)


class SeatRound(In):
    round: int = Field(..., ge=1, le=100, description="the round to seat: the next one")
    seating: dict | None = Field(None, description="the director's own seating "
                                 "{tables: [[names]], bye}; default: the format's")
    seed: Annotated[str, StringConstraints(max_length=80)] | None = None


class SeatFinals(In):
    stage: Literal["semi-final", "final"] = Field(
        ..., description="the finals stage to seat: the next one of the format's")


class Override(In):
    kind: Literal["result", "score", "set-valid", "void-turn"]
    body: dict = Field(..., description="round, table and game (result, score) or turn")
    reason: Words = Field("", description="why: required, kept in the audit log")
    by: Annotated[str, StringConstraints(strip_whitespace=True, max_length=40)] = "director"


class Pause(In):
    paused: bool = True


class HallSettings(In):
    timer: Literal["40s", "1min", "2min"] | None = None
    format: Annotated[str, StringConstraints(max_length=40)] | None = Field(
        None, description="another format preset (until round 1 is seated)")
    switches: dict[Annotated[str, StringConstraints(max_length=40)], Switch] | None = Field(
        None, max_length=20, description="format switches, the edition among them")


class Answer(In):
    answer: Words
