"""Health, the editions, the list of games on this server, samples and QR codes."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from app.server import schemas
from app.server.games import editions_json
from app.server.main import version
from app.server.messages import say
from app.server.refusals import Refused
from app.server.routers.deps import table

router = APIRouter(prefix="/api", tags=["server"])


@router.get("/health", response_model=schemas.Health,
            responses={503: {"model": schemas.Health, "description": "the database does "
                                                                       "not answer"}})
def health(request: Request):
    """503 while the database does not answer, so a hall's load balancer sends the
    tables to another server process."""
    service = getattr(request.app.state, "service", None)
    storage = request.app.state.storage
    body = {"models": service is not None and service.reader is not None,
            "version": version(), "process": f"{socket.gethostname()}:{os.getpid()}",
            "database": "sqlite" if storage.target.is_sqlite else "postgresql",
            "database_ok": storage.reachable()}
    body["ok"] = body["models"] and body["database_ok"]
    if not body["database_ok"]:
        body["detail"] = "the database does not answer; games cannot be read or played"
        return JSONResponse(body, status_code=503)
    return body


@router.get("/editions", response_model=list[schemas.Edition])
def editions():
    """Every rule preset with all its RULES.md §10 settings."""
    return editions_json()


@router.get("/games", response_model=list[schemas.GameSummary], dependencies=[Depends(table)],
            responses={401: {"model": schemas.Problem}, 403: {"model": schemas.Problem}})
def list_games(request: Request):
    """The games on this server (table token), each with its `token`: a second phone at
    the table joins a running game from the printed link."""
    return [{"id": g.id, "players": g.config["players"], "state": g.state["phase"],
             "created_at": g.created_at, "token": g.token}
            for g in request.app.state.storage.games()]


SAMPLE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}\.jpg$")


def _samples_dir() -> Path:
    from vision.recognition.settings import SAMPLES_DIR

    return SAMPLES_DIR


@router.get("/samples", response_model=list[str])
def samples():
    """The rendered sample photos this server can hand out (to try the page without a
    table)."""
    folder = _samples_dir()
    return sorted(p.name for p in folder.glob("*.jpg")) if folder.is_dir() else []


@router.get("/samples/{name}", responses={200: {"content": {"image/jpeg": {}}},
                                          404: {"model": schemas.Problem}})
def sample(name: str):
    """One sample photo (only names from `/api/samples`)."""
    path = _samples_dir() / name
    if not SAMPLE_NAME.match(name) or not path.is_file():
        raise Refused(404, say("sample.not_found", name=repr(name[:64])))
    return FileResponse(path, media_type="image/jpeg")


QR_MAX = 600  # characters: a join link is ~100; the limit keeps the code readable and cheap


@router.get("/qr.svg", response_class=Response,
            responses={200: {"content": {"image/svg+xml": {}}},
                       422: {"model": schemas.Problem, "description": "empty or too long"}})
def qr_svg(data: Annotated[str, Query(min_length=1, max_length=QR_MAX,
                                      description="the text to encode, e.g. a game's link")]):
    """A QR code of `data` as SVG, so a second phone joins by scanning the first one's
    screen. No token: it encodes only what the caller sends."""
    import qrcode
    from qrcode.image.svg import SvgPathFillImage

    svg = qrcode.make(data, image_factory=SvgPathFillImage, border=2).to_string()
    return Response(svg, media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=86400",
                             "X-Content-Type-Options": "nosniff"})
