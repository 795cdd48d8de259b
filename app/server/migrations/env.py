"""Alembic's environment: the server hands over an open connection (no URL, no ini file)."""

from alembic import context

from app.server.dbtables import metadata

connection = context.config.attributes["connection"]
# Batch mode: SQLite alters a table by copying it, which Alembic does only when told.
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
