"""A verdict's check notes (`vision.game.checks`): English words made from the same ids and
parameters the page words (`ref()`), one tile and more, as the CLI and the API print them."""

from __future__ import annotations

from referee.reasons import reason_refs
from vision.game.checks import CHECK_IDS, ENGLISH, covered_note, edge_note, hidden_note


def test_each_note_is_its_english_words_and_its_id():
    one, two = hidden_note(["R5"]), hidden_note(["R5", "K9"])
    assert one == ("1 tile hidden under something when the table was read (R5): counted "
                   "where it lay; clear the view and check")
    assert two.startswith("2 tiles hidden under something when the table was read (R5 K9): "
                          "counted where they lay")
    assert two.ref() == {"id": "check.hidden", "params": {"count": 2, "tiles": "R5 K9"}}
    covered = covered_note(["B3"])
    assert covered.ref()["id"] == "check.covered_before" and "(B3)" in covered
    assert "its place" in covered and "their place" in covered_note(["B3", "B4"])


def test_an_edge_note_names_the_photo_in_english_and_gives_the_page_codes():
    note = edge_note(["K8"], ["R3"])
    assert note.startswith("2 tiles at the edge of one photo only: K8 (before), R3 (after); ")
    assert note.endswith("check them, or photograph the same part of the table both times")
    assert note.ref() == {"id": "check.edge", "params": {"count": 2, "tiles": "K8 R3"}}
    assert edge_note([], ["K8"]).startswith("1 tile at the edge of one photo only: K8 (after)")


def test_the_referee_refs_and_the_servers_ids_take_the_notes():
    from app.server.messages import all_ids

    assert CHECK_IDS == set(ENGLISH) and CHECK_IDS <= all_ids()
    assert reason_refs([hidden_note(["J"])]) == [
        {"id": "check.hidden", "params": {"count": 1, "tiles": "J"}}]
