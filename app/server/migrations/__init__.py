"""Alembic migrations of the game database, run by the server on start (`app.server.dbopen`).

No alembic.ini: `dbopen.alembic_config()` points Alembic here. A developer adds a revision
with `python -m app.server.migrations revision -m "what changes"`.
"""
