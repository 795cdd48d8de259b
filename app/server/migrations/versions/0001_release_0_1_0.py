"""Release 0.1.0's schema, exactly: games, photos, readings, turns, rounds, meta.

A database made by release 0.1.0 (before Alembic) already has these tables: it is stamped
with this revision on start, not built again. Frozen here on purpose (not imported from
dbtables.py): a later change to the tables is a new revision.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.sqlite import REAL

TIME = sa.Float().with_variant(REAL(), "sqlite")  # REAL as release 0.1.0 wrote it

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    meta = op.create_table(
        "meta",
        sa.Column("key", sa.Text, primary_key=True, nullable=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.Text, primary_key=True, nullable=True),
        sa.Column("token", sa.Text, nullable=False),
        sa.Column("watch_token", sa.Text, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.Column("phase", sa.Text, nullable=False, server_default="setup"),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
    )
    op.create_table(
        "photos",
        sa.Column("id", sa.Text, primary_key=True, nullable=True),
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("content_type", sa.Text, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "readings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True, nullable=True),
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("photo_id", sa.Text),
        sa.Column("reading", sa.Text, nullable=False),
        sa.Column("detections", sa.LargeBinary, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "turns",
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("player", sa.Text, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("before_reading", sa.Integer),
        sa.Column("after_reading", sa.Integer),
        sa.Column("verdict", sa.Text, nullable=False),
    )
    op.create_table(
        "rounds",
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("number", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
    )
    op.create_index("readings_game", "readings", ["game_id"])
    op.create_index("photos_game", "photos", ["game_id"])
    # Release 0.1.0's schema number, which that release wrote on its first start.
    op.bulk_insert(meta, [{"key": "schema", "value": "1"}])


def downgrade() -> None:
    for name in ("rounds", "turns", "readings", "photos", "games", "meta"):
        op.drop_table(name)
