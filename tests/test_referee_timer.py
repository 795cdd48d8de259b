"""The turn timer and its penalty (RULES.md section 7, settings of section 10)."""

import pytest

from referee import TimeoutPenalty, TurnTimer, edition, parse_tiles


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def tick(self, seconds):
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


def test_a_turn_lasts_two_minutes_by_default(clock):
    timer = TurnTimer(edition(), clock=clock)
    timer.start()
    clock.tick(119)
    assert timer.remaining() == 1 and not timer.expired()
    clock.tick(1)
    assert timer.remaining() == 0 and timer.expired()
    clock.tick(50)
    assert timer.remaining() == 0  # never below zero


def test_the_time_is_a_per_game_option(clock):
    timer = TurnTimer(edition().replace(turn_seconds=60), clock=clock)
    timer.start()
    clock.tick(60)
    assert timer.expired()
    assert TurnTimer(45, clock=clock).seconds == 45


def test_a_game_without_timer_never_expires(clock):
    timer = TurnTimer(edition().replace(turn_seconds=None), clock=clock)
    timer.start()
    clock.tick(10_000)
    assert timer.remaining() is None and not timer.expired() and timer.due_warnings() == []


def test_pause_stops_the_clock_and_resume_restarts_it(clock):
    timer = TurnTimer(120, clock=clock)
    timer.start()
    clock.tick(30)
    timer.pause()
    clock.tick(500)
    assert timer.remaining() == 90 and not timer.running
    timer.resume()
    clock.tick(10)
    assert timer.remaining() == 80 and timer.running


def test_warnings_come_once_each_at_the_chosen_remaining_times(clock):
    timer = TurnTimer(120, clock=clock, warnings_at=(30, 10))
    timer.start()
    clock.tick(80)
    assert timer.due_warnings() == []
    clock.tick(11)
    assert timer.due_warnings() == [30]
    assert timer.due_warnings() == []
    clock.tick(25)
    assert timer.due_warnings() == [10]
    timer.start()  # a new turn gives the warnings again
    clock.tick(115)
    assert timer.due_warnings() == [30, 10]


BEFORE = [parse_tiles("K5 R5 B5"), parse_tiles("R6 R7 R8")]
RACK = parse_tiles("R9 K1 K2 O5")


def test_de_luxe_loose_tiles_go_back_and_the_player_draws_three(clock):
    after = [parse_tiles("K5 R5 B5 O5"), parse_tiles("R6 R7 R8 R9"), parse_tiles("K1 K2")]
    penalty = TurnTimer(edition(), clock=clock).penalty(BEFORE, after, RACK, pool_size=40)
    assert isinstance(penalty, TimeoutPenalty)
    assert penalty.tiles_back_to_rack == parse_tiles("K1 K2")
    assert penalty.draw == 3
    assert penalty.restored_table == after[:2]


def test_travel_tin_restores_the_whole_table(clock):
    after = [parse_tiles("K5 R5 B5 O5"), parse_tiles("R6 R7 R8 R9"), parse_tiles("K1 K2")]
    penalty = TurnTimer(edition("travel-tin"), clock=clock).penalty(BEFORE, after, RACK, 40)
    assert sorted(penalty.tiles_back_to_rack) == sorted(parse_tiles("O5 R9 K1 K2"))
    assert penalty.restored_table == BEFORE and penalty.draw == 3


def test_a_penalty_draw_takes_what_is_left_in_the_pool(clock):
    after = [parse_tiles("K5 R5 B5"), parse_tiles("R6 R7"), parse_tiles("R8 R9")]
    assert TurnTimer(120, clock=clock).penalty(BEFORE, after, RACK, pool_size=2).draw == 2
    assert TurnTimer(120, clock=clock).penalty(BEFORE, after, RACK, pool_size=0).draw == 0


def test_a_valid_table_when_time_runs_out_costs_nothing_except_with_pressman(clock):
    after = [parse_tiles("K5 R5 B5 O5"), parse_tiles("R6 R7 R8")]
    penalty = TurnTimer(120, clock=clock).penalty(BEFORE, after, RACK, 40)
    assert (penalty.tiles_back_to_rack, penalty.draw, penalty.restored_table) == ([], 0, after)
    pressman = edition().replace(timeout_draw_when_valid=1)
    assert TurnTimer(pressman, clock=clock).penalty(BEFORE, after, RACK, 40).draw == 1


def test_time_up_with_nothing_laid_is_a_pass(clock):
    penalty = TurnTimer(120, clock=clock).penalty(BEFORE, BEFORE, RACK, 40)
    assert (penalty.tiles_back_to_rack, penalty.draw, penalty.restored_table) == ([], 1, BEFORE)
