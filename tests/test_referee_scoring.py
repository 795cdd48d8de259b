"""End of round and scoring (RULES.md section 8; pool-empty rule of section 10)."""

import pytest

from referee import ScoreSheet, edition, parse_tiles, rack_penalty, score_round


@pytest.mark.parametrize(
    ("rack", "edition_name", "penalty"),
    [("R5 K13", "original", 18), ("R5 J K13", "original", 43),
     ("R5 J K13", "travel-tin", 48), ("J J", "rummy", 60), ("", "original", 0)],
)
def test_a_rack_costs_its_numbers_and_a_joker_25_or_30(rack, edition_name, penalty):
    assert rack_penalty(parse_tiles(rack), edition(edition_name)) == penalty


def test_a_tournament_may_make_a_joker_cost_50():
    assert rack_penalty(parse_tiles("J"), edition().replace(rack_joker_penalty=50)) == 50


def test_the_winner_scores_what_the_losers_pay():
    # The example of section 8: B has 5 left, C 16, D 3.
    racks = {"A": [], "B": parse_tiles("R5"), "C": parse_tiles("K7 B9"), "D": parse_tiles("O3")}
    result = score_round(racks, "A", edition())
    assert result.scores == {"A": 24, "B": -5, "C": -16, "D": -3}
    assert result.winner == "A" and not result.pool_empty


def test_the_winner_has_laid_every_tile():
    with pytest.raises(ValueError, match="still has tiles"):
        score_round({"A": parse_tiles("R1"), "B": []}, "A")
    with pytest.raises(ValueError, match="not one of the players"):
        score_round({"A": [], "B": []}, "Z")


def test_pool_empty_lowest_rack_wins_and_losers_pay_the_difference():
    racks = {"A": parse_tiles("R4"), "B": parse_tiles("R10"), "C": parse_tiles("K7 K8")}
    result = score_round(racks, None, edition())
    assert result.winner == "A" and result.pool_empty
    assert result.scores == {"A": 17, "B": -6, "C": -11}


def test_pool_empty_losers_may_pay_their_full_total():
    racks = {"A": parse_tiles("R4"), "B": parse_tiles("R10"), "C": parse_tiles("K7 K8")}
    result = score_round(racks, None, edition().replace(pool_empty_scoring="full"))
    assert result.scores == {"A": 25, "B": -10, "C": -15}


def test_pool_empty_equal_lowest_totals_mean_no_winner():
    racks = {"A": parse_tiles("R4"), "B": parse_tiles("K4"), "C": parse_tiles("K7 K8")}
    result = score_round(racks, None, edition())
    assert result.winner is None
    assert result.scores == {"A": 0, "B": 0, "C": -11}


def sheet_from_the_rules():
    sheet = ScoreSheet(["A", "B", "C", "D"])
    sheet.add_round({"A": 24, "B": -5, "C": -16, "D": -3})
    sheet.add_round({"A": -6, "B": -11, "C": 22, "D": -5})
    return sheet


def test_scores_add_up_per_player_and_the_highest_total_leads():
    sheet = sheet_from_the_rules()
    assert sheet.totals == {"A": 18, "B": -16, "C": 6, "D": -8}
    assert sheet.leader == "A"


def test_a_tie_at_the_top_has_no_leader():
    sheet = ScoreSheet(["A", "B"])
    assert sheet.leader is None
    sheet.add_round({"A": 5, "B": 5})
    assert sheet.leader is None


def test_a_round_must_score_every_player_on_the_sheet():
    with pytest.raises(ValueError):
        ScoreSheet(["A", "B"]).add_round({"A": 3})


def test_a_round_of_other_players_names_them_in_words():
    with pytest.raises(ValueError) as caught:
        ScoreSheet(["Ann", "Ben", "Cas"]).add_round({"Ann": 5, "Dee": -5})
    assert str(caught.value) == ("the sheet's players are Ann, Ben and Cas: Dee is not on it; "
                                 "Ben and Cas did not play this round")


def test_score_sheet_csv_round_trip():
    text = sheet_from_the_rules().to_csv()
    assert text.splitlines()[:2] == ["player,round 1,round 2,total", "A,24,-6,18"]
    again = ScoreSheet.from_csv(text)
    assert again.totals == sheet_from_the_rules().totals and again.to_csv() == text


def test_a_wrong_total_on_a_sheet_is_caught():
    with pytest.raises(ValueError, match="not the sum"):
        ScoreSheet.from_csv("player,round 1,total\nA,5,6\n")
