"""The tournament's exports: export.json (standings, seatings, results after overrides,
every game with its turns, the audit log), standings.csv and games.csv. The schema is in
docs/tournament-hall.md ("Exports")."""

from __future__ import annotations

import csv
import io


def export(svc, tournament_id: str) -> dict:
    """Standings and every game: tables, score sheets, judged turns; and the log."""
    row = svc.row(tournament_id)
    games = []
    for rnd, number, game_id in svc.store.tables(row.id):
        view = svc.games.view(game_id)
        games.append({"round": rnd, "table": number, "game_id": game_id,
                      "players": [p["name"] for p in view["players"]],
                      "state": view["state"], "sheet": view["sheet"],
                      "turns": svc.games.history(game_id)})
    return {"schema": "rummikub-hall/1", **svc.standings_json(row.id),
            "format_switches": row.format, "settings": row.settings,
            "players": svc.store.players(row.id),
            "seatings": [s.to_dict() for s in svc.seatings(row.id)],
            "results": [r.to_dict() for r in svc.results(row.id)],
            "games": games, "log": svc.store.entries(row.id)}


def standings_csv(svc, tournament_id: str) -> str:
    row = svc.row(tournament_id)
    fmt = svc.fmt(row)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["place", "player", "tournament_points", "games", *fmt.tie_breaks])
    for s in svc.standings(row.id):
        line = s.to_dict()
        writer.writerow([line["place"], line["player"], line["tournament_points"],
                         line["games"], *(line["tie_breaks"].get(t) for t in fmt.tie_breaks)])
    return out.getvalue()


def games_csv(svc, tournament_id: str) -> str:
    """One line per player per game: round, table, game, player, score."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["round", "table", "game", "player", "score"])
    for result in svc.results(tournament_id):
        for player, score in result.scores.items():
            writer.writerow([result.round, result.table, result.game, player, score])
    return out.getvalue()
