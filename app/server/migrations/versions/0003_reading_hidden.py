"""What the camera does not see: per stable reading, its tiles under a hand as the process
holding the camera last saw them (`reading_hidden`), so every process sharing the database
judges a turn with them, and a tracker started elsewhere after a crash keeps them hidden.

A table of its own: release 0.1.0's `readings` stays column for column as it was.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.sqlite import REAL

TIME = sa.Float().with_variant(REAL(), "sqlite")

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reading_hidden",
        sa.Column("reading_id", sa.Integer, sa.ForeignKey("readings.id"), primary_key=True,
                  autoincrement=False),
        sa.Column("game_id", sa.Text, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.Column("tiles", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("reading_hidden")
