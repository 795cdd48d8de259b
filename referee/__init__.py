"""The Rummikub rules engine: tiles, sets, editions, turns, timer, scoring, arrangements.

Standard library only, so the camera, the app and the command line can all lean on it.
Sections refer to RULES.md.
"""

from referee.editions import DEFAULT_RULES, EDITIONS, Rules, copy_problems, edition
from referee.scoring import RoundResult, ScoreSheet, rack_penalty, score_round
from referee.sets import SetVerdict, check_set, check_table, table_is_valid
from referee.solver import SearchBudgetExceeded, TooManyTiles, arrange, check_box_holds
from referee.tiles import JOKER, Color, Tile, TileCodeError, format_tiles, parse_tiles
from referee.timer import TimeoutPenalty, TurnTimer
from referee.turn import MeldVerdict, TurnVerdict, check_initial_meld, check_turn

__all__ = [
    "Tile", "TileCodeError", "parse_tiles", "format_tiles", "Color", "JOKER",
    "Rules", "edition", "EDITIONS", "DEFAULT_RULES",
    "SetVerdict", "check_set", "check_table", "table_is_valid",
    "MeldVerdict", "check_initial_meld", "TurnVerdict", "check_turn",
    "copy_problems",
    "TurnTimer", "TimeoutPenalty",
    "rack_penalty", "RoundResult", "score_round", "ScoreSheet",
    "arrange", "SearchBudgetExceeded", "TooManyTiles", "check_box_holds",
]
