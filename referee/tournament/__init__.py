"""Tournament rules as pure functions: formats (presets of a few switches), seating,
standings with tie-breaks, finals. Standard library only, like the rest of referee."""

from referee.tournament.finals import (
    Match,
    final_table,
    finals_seeding,
    finals_stages,
    match_of,
    table_ranking,
)
from referee.tournament.format import FORMATS, TIE_BREAKS, Finals, Format, tournament_format
from referee.tournament.seating import (
    Seating,
    byes_needed,
    choose_bye,
    met_before,
    repeat_count,
    seat_first_round,
    seat_next_round,
    seating_problems,
    table_sizes,
)
from referee.tournament.standings import (
    GameResult,
    Standing,
    bye_points,
    game_points,
    results_problems,
    standings,
)

__all__ = [
    "Format", "Finals", "FORMATS", "TIE_BREAKS", "tournament_format",
    "Seating", "table_sizes", "seat_first_round", "seat_next_round", "seating_problems",
    "repeat_count", "met_before", "byes_needed", "choose_bye", "bye_points",
    "GameResult", "Standing", "standings", "results_problems", "game_points",
    "finals_seeding", "final_table", "Match", "finals_stages", "table_ranking", "match_of",
]
