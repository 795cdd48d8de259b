"""The FastAPI app: `create_app(settings)`.

The lifespan opens the database, loads the TileReader once, starts the frame hub and a
tick that judges turns whose time ran out. Routers (`app/server/routers/`) only parse,
call the game flow (`games.py`), and answer. Every error is JSON `{"detail": "..."}`
with a 4xx status; an unexpected failure is a 500 with the same shape, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.server.games import GameError, GameService
from app.server.hallfeed import HallFeed
from app.server.limits import DecodeBudget
from app.server.messages import Message, say
from app.server.refusals import Refused, refusal_body
from app.server.storage import Storage, StorageFull
from app.server.tournaments import HallService
from vision.recognition.decode import MAX_BYTES

log = logging.getLogger("rummikub.server")

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
DEFAULT_DATA_DIR = Path("data")
DB_NAME = "rummikub.sqlite3"
# The photo limits are the command line's (`vision.recognition.decode`: 64 MB, 120 megapixels): a
# phone's 50-108 MP photo at high quality may be over 15 MB, and whatever `rummikub scan`
# reads the server reads too.
UPLOAD_LIMIT = MAX_BYTES
# Everything else (JSON: players, codes, corrections) is a few hundred bytes; a body of
# another kind over this is refused before it is parsed (a 64 MB JSON body would take
# hundreds of MB as Python objects).
OTHER_BODY_LIMIT = 1024 * 1024
PHOTO_SLOTS = 2  # uploaded photos decoded and read at the same time
# Memory for decoded pixels, all photos and frames together (`limits.DecodeBudget`): two of
# the largest photos read (a 120 MP JPEG holds up to 360 MB decoded) at once; more wait.
DECODE_MEMORY = 768 * 2**20


@dataclass
class ServerSettings:
    data_dir: Path = DEFAULT_DATA_DIR
    # A SQLite file, or a database URL (postgresql+psycopg://user@host/db); default:
    # data_dir / rummikub.sqlite3
    db_path: Path | str | None = None
    models_dir: Path | None = None
    profile: Path | None = None  # a calibration profile for the table's camera
    upload_limit: int = UPLOAD_LIMIT
    decode_memory: int = DECODE_MEMORY  # bytes of decoded pixels held at once, in all
    tick_s: float = 0.5
    # Threads reading frames for all tables. One: a read already runs the models on two
    # threads, and on two cores a second reader only makes every read slower
    # (`bench.serve_bench --frame-workers 1|2`: p50 ~310 vs ~490 ms, 4 tables x 5 frames/s).
    frame_workers: int = 1
    hold: int = 3  # frames a table change must hold before it counts
    # ... or at least 2 frames this many seconds apart (docs/decisions/time-hold.md)
    hold_s: float | None = 0.4
    frames_idle_s: float = 30 * 60.0  # a table's tracker is let go after this long unused
    static_dir: Path | None = STATIC_DIR
    reader: object | None = None  # an already loaded TileReader (tests share one)
    clock: Callable[[], float] = time.time  # the wall clock: turn timers survive restarts

    @property
    def database(self) -> Path | str:
        if self.db_path is None:
            return Path(self.data_dir) / DB_NAME
        return self.db_path if "://" in str(self.db_path) else Path(self.db_path)


def version() -> str:
    try:
        from importlib.metadata import version as dist_version

        return dist_version("rummikub-referee")
    except Exception:
        return "0.1.0"


def load_reader(settings: ServerSettings):
    """The TileReader, loaded once; with the table's calibration profile when given."""
    if settings.reader is not None:
        return settings.reader
    from calibration import load_reader as load_profiled_reader

    # A calibration profile's problems (missing, corrupt, made for another classifier)
    # are ValueErrors (calibration.ProfileError) naming the file.
    reader = load_profiled_reader(settings.models_dir, profile=settings.profile)
    return reader


def _limit_words(limit: int, photo: bool) -> str:
    size = f"{limit / 2**20:.3g} MB ({limit} bytes)"
    return f"a photo may be at most {size}" if photo else \
        f"a request that is not a photo may be at most {size}"


class _TooLarge(Refused):
    def __init__(self, limit: int, photo: bool):
        super().__init__(413, say("request.over_limit", limit=_limit_words(limit, photo)))


class BodyLimit:
    """Refuses request bodies over the limit (413) before they are parsed or kept:
    by the Content-Length header, and by counting what actually arrives. Photos
    (multipart forms, image bodies) may take `limit`; any other body `other_limit`."""

    def __init__(self, app, limit: int, other_limit: int = OTHER_BODY_LIMIT):
        self.app = app
        self.limit = limit
        self.other_limit = min(other_limit, limit)

    @staticmethod
    def _is_photo(headers: dict) -> bool:
        kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        return kind.startswith(b"image/") or kind == b"multipart/form-data"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        photo = self._is_photo(headers)
        allowed = self.limit if photo else self.other_limit
        length = headers.get(b"content-length")
        if length is not None:
            text = length.decode("latin-1").strip()
            if not text.isdigit():
                return await _send_json(send, 400, say("request.bad_length"))
            if int(text) > allowed + 64 * 1024:  # multipart wraps a photo in a little text
                return await _send_json(send, 413, say("request.too_large", size=text,
                                                       limit=_limit_words(allowed, photo)))
        received = 0
        limit = allowed + 64 * 1024

        async def counted():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge(allowed, photo)
            return message

        return await self.app(scope, counted, send)


class ErrorsAnswered:
    """An unexpected error becomes a logged 500 `{"detail"}` here, inside Starlette's
    ServerErrorMiddleware: that one answers too, but then re-raises, and uvicorn closes
    the keep-alive connection, so the phone's next request on it was reset."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracked(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise  # half an answer sent: only closing the connection says it failed
            await _send_json(send, 500, say("server.failed"))


async def _send_json(send, status: int, message: Message) -> None:
    body = json.dumps(refusal_body(str(message), message)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})




def _validation_words(error: RequestValidationError, path: str = "") -> tuple[int, Message]:
    """The status and words of a refused request body; its id names the first field."""
    parts = []
    for item in error.errors():
        if item.get("type") == "json_invalid":
            return 400, say("request.not_json_because",
                            error=item.get("ctx", {}).get("error", ""))
        where = ".".join(str(x) for x in item.get("loc", ()) if x not in ("body", "query",
                                                                          "path", "header"))
        missing = item.get("type") == "missing"
        if missing and (where == "turn_id" or (not where and "/turn/" in path)):
            parts.append(say("request.turn_id"))
        elif missing and not where:
            parts.append(say("request.no_body"))
        else:
            parts.append(say("request.invalid", field=where or "body",
                             problem=item.get("msg", "invalid")))
    if not parts:
        return 422, say("request.invalid_other")
    if len(parts) == 1:
        return 422, parts[0]
    # several problems: one message, the first one's field and all their words
    field_name, problem = "; ".join(str(p) for p in parts[:5]).split(": ", 1)
    return 422, say("request.invalid", field=field_name, problem=problem)


DOCS_ASSETS = "/docs-assets"


def _docs_assets_dir() -> Path | None:
    """Swagger UI's files as the `fastapi-offline` package ships them."""
    import importlib.util

    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "static"
    return folder if (folder / "swagger-ui-bundle.js").is_file() else None


def _local_docs(app: FastAPI) -> None:
    """FastAPI's documented recipe for self-hosting the docs' JavaScript and CSS."""
    from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
    from fastapi.staticfiles import StaticFiles

    assets = _docs_assets_dir()
    if assets is None:
        log.warning("fastapi-offline is not installed: /docs is not served")
        return
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")
    redirect = app.swagger_ui_oauth2_redirect_url

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request):
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API",
            oauth2_redirect_url=f"{root}{redirect}",
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            # No badge from the online validator: nothing is fetched from elsewhere.
            swagger_ui_parameters={"validatorUrl": None})

    @app.get(redirect, include_in_schema=False)
    def swagger_ui_redirect():
        return get_swagger_ui_oauth2_redirect_html()


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    settings = settings or ServerSettings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        from app.server.frames import FrameHub

        storage = Storage(settings.database)
        reader = await run_in_threadpool(load_reader, settings)
        service = GameService(storage, reader, clock=settings.clock)
        budget = DecodeBudget(settings.decode_memory)
        hub = FrameHub(service, reader, workers=settings.frame_workers, hold=settings.hold,
                       hold_s=settings.hold_s, idle_s=settings.frames_idle_s, budget=budget)
        app.state.decode_budget = budget
        app.state.settings = settings
        app.state.storage = storage
        app.state.service = service
        app.state.hub = hub
        app.state.hall = HallService(service, hub)
        # The hall's live sockets (console, big screen) hear every change of a tournament.
        app.state.hallfeed = hallfeed = HallFeed(service, app.state.hall, hub)
        app.state.table_token = storage.table_token()
        # Photos decoded and read at once: each may take 150 MB and a core, so a burst
        # of uploads waits its turn instead of exhausting memory.
        app.state.photo_slots = threading.BoundedSemaphore(PHOTO_SLOTS)

        async def tick():
            while True:
                await asyncio.sleep(settings.tick_s)
                try:
                    hub.sweep()
                    hallfeed.sweep()
                    if not storage.full:  # a timed-out turn waits for space to be judged
                        await run_in_threadpool(service.check_all_timeouts)
                except Exception:  # the tick must outlive any one bad game
                    log.exception("timeout tick failed")

        # Games changed by other server processes on this database (PostgreSQL): their
        # live sockets read them again. On SQLite it hears nothing.
        def heard_again():
            for game_id in list(hub.games):
                service.heard(game_id)
            hallfeed.everything()

        listener = storage.listen(service.heard, on_reconnect=heard_again,
                                  on_hall=hallfeed.heard)
        task = asyncio.get_running_loop().create_task(tick())
        try:
            yield
        finally:
            task.cancel()
            listener.close()
            await hub.close()
            storage.close()

    app = FastAPI(
        title="Rummikub referee",
        version=version(),
        description="The game server: games, turns judged from photos and camera frames, "
                    "the turn timer, scores. Changes need the game's token (X-Token header "
                    "or ?token=); the watch token reads only.",
        lifespan=lifespan,
        # /docs is served below from local files: a table's LAN often has no internet,
        # and the default page loads its scripts from a CDN. No /redoc: ReDoc fetches its
        # logo from its makers' CDN whatever it is told.
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, limit=settings.upload_limit)
    app.add_middleware(ErrorsAnswered)  # added last: the outermost of these two
    _local_docs(app)

    @app.exception_handler(GameError)
    async def game_error(request: Request, error: GameError):
        body = {"detail": str(error)}
        if getattr(error, "message_id", None):
            body["message_id"] = error.message_id
        return JSONResponse(body, status_code=error.status)

    @app.exception_handler(StorageFull)
    async def storage_full(request: Request, error: StorageFull):
        log.warning("disk full: %s %s refused", request.method, request.url.path)
        full = say("storage.full")
        return JSONResponse(refusal_body(str(error), full if str(error) == str(full) else None),
                            status_code=error.status)

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, error: StarletteHTTPException):
        # A Refused carries its id; any other (a route not found, a method not allowed) is
        # answered as FastAPI would.
        message_id = getattr(error, "message_id", None)
        if message_id is None:
            return await http_exception_handler(request, error)
        return JSONResponse({"detail": error.detail, "message_id": message_id},
                            status_code=error.status_code, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError):
        status, message = _validation_words(error, request.url.path)
        return JSONResponse(refusal_body(str(message), message), status_code=status)

    from app.server.routers import games, hall_live, meta, table, tournaments

    app.include_router(meta.router)
    app.include_router(games.router)
    app.include_router(table.router)
    app.include_router(tournaments.router)
    app.include_router(hall_live.router)

    static = settings.static_dir
    if static is not None and Path(static).is_dir() and (Path(static) / "index.html").is_file():
        from fastapi.staticfiles import StaticFiles

        app.mount("/", StaticFiles(directory=str(static), html=True), name="page")
    else:
        @app.get("/", include_in_schema=False)
        def no_page():
            return HTMLResponse("<!doctype html><title>Rummikub referee</title><p>The server "
                                "runs; the table page is not installed. The API is at "
                                "<a href='/docs'>/docs</a>.</p>")

    return app
