"""/api/health names the process and says whether the database answers (on both)."""

from __future__ import annotations

import os
import socket

import pytest


def test_health_names_the_process_and_the_database(client, server_db):
    body = client.get("/api/health").json()
    assert body["process"] == f"{socket.gethostname()}:{os.getpid()}"
    assert body["database"] == ("sqlite" if server_db is None else "postgresql")
    assert body["ok"] and body["database_ok"] and body["models"]


def test_health_is_503_in_words_while_the_database_does_not_answer(client, server_db,
                                                                  request):
    if server_db is None:
        pytest.skip("a SQLite file always answers while its folder is there")
    request.getfixturevalue("postgres_server").drop_database(server_db)
    response = client.get("/api/health")
    assert response.status_code == 503
    body = response.json()
    assert not body["ok"] and not body["database_ok"] and "database" in body["detail"]
