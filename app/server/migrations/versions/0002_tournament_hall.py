"""The tournament hall: tournaments, their players, rounds, tables, calls and the audit log.

The audit log (`hall_log`) is append-only: triggers refuse every UPDATE and DELETE of it,
in SQLite and in PostgreSQL, so not even a hand-written SQL statement can change history.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.sqlite import REAL

TIME = sa.Float().with_variant(REAL(), "sqlite")

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

LOG_WORDS = "the audit log is append-only: entries are never changed or deleted"


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("director_token", sa.Text, nullable=False),
        sa.Column("watch_token", sa.Text, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("format", sa.Text, nullable=False),
        sa.Column("settings", sa.Text, nullable=False),
    )
    op.create_table(
        "hall_players",
        sa.Column("tournament_id", sa.Text, sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("number", sa.Integer, nullable=False),
    )
    op.create_table(
        "hall_rounds",
        sa.Column("tournament_id", sa.Text, sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("seating", sa.Text, nullable=False),
    )
    op.create_table(
        "hall_tables",
        sa.Column("tournament_id", sa.Text, sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("round", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), nullable=False, unique=True),
    )
    op.create_table(
        "hall_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tournament_id", sa.Text, sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("by", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "hall_calls",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tournament_id", sa.Text, sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("photo_id", sa.Text),
        sa.Column("answered_at", TIME),
        sa.Column("answer", sa.Text),
        sqlite_autoincrement=True,
    )
    op.create_index("hall_log_tournament", "hall_log", ["tournament_id"])
    op.create_index("hall_calls_tournament", "hall_calls", ["tournament_id"])
    if op.get_bind().dialect.name == "sqlite":
        for action in ("UPDATE", "DELETE"):
            op.execute(f"CREATE TRIGGER hall_log_no_{action.lower()} BEFORE {action} ON hall_log "
                       f"BEGIN SELECT RAISE(ABORT, '{LOG_WORDS}'); END")
    else:
        op.execute("CREATE FUNCTION hall_log_append_only() RETURNS trigger AS $$ BEGIN "
                   f"RAISE EXCEPTION '{LOG_WORDS}'; END $$ LANGUAGE plpgsql")
        op.execute("CREATE TRIGGER hall_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE "
                   "ON hall_log FOR EACH STATEMENT EXECUTE FUNCTION hall_log_append_only()")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP TRIGGER hall_log_append_only ON hall_log")
        op.execute("DROP FUNCTION hall_log_append_only()")
    for name in ("hall_calls", "hall_log", "hall_tables", "hall_rounds", "hall_players",
                 "tournaments"):
        op.drop_table(name)
