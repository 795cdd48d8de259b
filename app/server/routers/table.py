"""The table: photos, camera frames (POST and WebSocket), the latest reading,
corrections, racks, the start draw, stored photos."""

from __future__ import annotations

import asyncio
import contextlib
import json

from fastapi import (
    APIRouter,
    HTTPException,
    Request,
    WebSocket,
    WebSocketDisconnect,
)
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from app.server import schemas
from app.server.auth import game_access, token_of
from app.server.frames import POSTED, CameraTaken, offer
from app.server.games import GameError
from app.server.limits import MessageRate
from app.server.messages import say
from app.server.refusals import Refused
from app.server.routers.deps import MAX_ID, Play, Watch, service
from app.server.routers.games import ERRORS
from app.server.routers.sockets import receive_within
from app.server.uploads import budgeted_photo, check_type, shown_as_jpeg, upload_bytes

router = APIRouter(prefix="/api/games", tags=["table"])

UPLOAD_ERRORS = {**ERRORS,
                 400: {"model": schemas.Problem, "description": "corrupt or truncated photo"},
                 413: {"model": schemas.Problem, "description": "photo over the size limit"},
                 415: {"model": schemas.Problem, "description": "not an image"},
                 422: {"model": schemas.Problem, "description": "bad request body, or a photo "
                       "too blurred, dark or overexposed to read (the detail says what to do)"}}


def _limit(request) -> int:
    return request.app.state.settings.upload_limit


# Frames posted without `?camera=` (`rummikub watch`, a script) count as one camera.
POSTED_CAMERA = POSTED


def _camera(request_or_ws):
    """The camera a frame comes from, as the sender names it (`?camera=`, any short text
    the page makes up once per camera start); None when it gives no name."""
    name = request_or_ws.query_params.get("camera")
    return ("camera", name[:64]) if name else None


@contextlib.contextmanager
def _upload(request, upload):
    """The uploaded photo checked, with the image the reader's detector needs decoded;
    its decode memory is held in the server's budget while the caller reads it, and the
    photos read at once are the server's photo slots (each read takes a core)."""
    detector = getattr(service(request).reader, "detector", None)
    data = upload_bytes(upload, _limit(request))
    with request.app.state.photo_slots, \
            budgeted_photo(data, request.app.state.decode_budget, detector) as photo:
        yield photo


PHOTO_BODY = {"requestBody": {"content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["photo"],
    "properties": {"photo": {"type": "string", "format": "binary"}}}}}, "required": True}}


async def _form(request: Request, max_fields: int = 1):
    """The multipart form, read by the route itself: FastAPI parses `File()` parameters
    before any dependency runs, so a request without the token would be read whole (up to
    64 MB) before its 401. Here the token dependency has already passed."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "multipart/form-data":
        raise Refused(415, say("upload.not_multipart"))
    try:
        return await request.form(max_files=1, max_fields=max_fields)
    except HTTPException:
        raise
    except Exception:
        raise Refused(400, say("upload.form_unreadable")) from None


@router.post("/{game_id}/photo", response_model=schemas.Reading, responses=UPLOAD_ERRORS,
             openapi_extra=PHOTO_BODY)
async def table_photo(request: Request, access: Play):
    """Photo mode: one still photo of the table (multipart `photo`), read and judged; it
    becomes the latest table reading."""
    form = await _form(request)

    def read():
        with _upload(request, form.get("photo")) as photo:
            return service(request).read_photo(access.game.id, photo)

    return await run_in_threadpool(read)


@router.get("/{game_id}/reading", response_model=schemas.Reading, responses=ERRORS)
def latest_reading(request: Request, access: Watch):
    """The latest stable table reading (the `rummikub scan --json` object of one photo)."""
    return service(request).latest_reading(access.game.id)


@router.post("/{game_id}/corrections", response_model=schemas.Reading, responses=ERRORS)
def correct(body: schemas.Correction, request: Request, access: Play):
    """A player says what a tile of the latest reading really is; the table is judged
    again, and the correction holds for that tile's place for the rest of the round. It
    belongs to the view it was made in: another camera (or photo) takes it over only where
    the tiles around it are found again; otherwise the reading says it was dropped."""
    reading, point = service(request).correct(access.game.id, body.tile_id, body.code)
    request.app.state.hub.correct(access.game.id, point, body.code.upper(), reading["view"])
    return reading


RACK_BODY = {"requestBody": {"content": {
    # Inlined: no route takes RackCodes as its body, so a $ref would point at nothing
    # (ReDoc refuses the whole document then).
    "application/json": {"schema": schemas.RackCodes.model_json_schema()},
    "multipart/form-data": {"schema": {"type": "object", "required": ["player", "photo"],
                                       "properties": {"player": {"type": "string"},
                                                      "photo": {"type": "string",
                                                                "format": "binary"}}}}},
    "required": True}}


@router.post("/{game_id}/racks", response_model=schemas.RackOut, responses=UPLOAD_ERRORS,
             openapi_extra=RACK_BODY)
async def rack(request: Request, access: Play):
    """A rack at the round's end, from a photo (multipart `photo` + `player`) or typed
    codes (JSON `{"player", "codes"}`): its tiles and penalty, a proposal not yet
    counted."""
    svc = service(request)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            body = schemas.RackCodes.model_validate_json(await request.body())
        except ValidationError as error:
            first = error.errors()[0]
            if first.get("type") == "json_invalid":
                raise Refused(400, say("request.not_json")) from None
            where = ".".join(str(x) for x in first.get("loc", ())) or "body"
            raise Refused(422, say("request.invalid", field=where,
                                            problem=first.get("msg"))) from None
        return await run_in_threadpool(svc.rack_from_codes, access.game.id, body.player,
                                       body.codes)
    if kind != "multipart/form-data":
        raise Refused(415, say("upload.rack_how"))
    form = await _form(request, max_fields=4)
    player, upload = form.get("player"), form.get("photo")
    if not isinstance(player, str) or not player.strip():
        raise Refused(422, say("upload.rack_player"))

    def read():
        with _upload(request, upload) as photo:
            return svc.rack_from_photo(access.game.id, player.strip(), photo)

    return await run_in_threadpool(read)


@router.post("/{game_id}/start-draw", response_model=schemas.StartDrawOut,
             responses=UPLOAD_ERRORS, openapi_extra=PHOTO_BODY)
async def start_draw(request: Request, access: Play):
    """Who starts: a photo (multipart `photo`) of the tiles drawn, one per player, left to
    right in seating order (RULES.md §3)."""
    form = await _form(request)

    def read():
        with _upload(request, form.get("photo")) as photo:
            return service(request).start_draw(access.game.id, photo)

    return await run_in_threadpool(read)


@router.post("/{game_id}/frames", status_code=202, response_model=schemas.FramesAccepted,
             responses=UPLOAD_ERRORS, openapi_extra={"requestBody": {"content": {
                 "image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
                 "required": True}})
async def frame(request: Request, access: Play):
    """One camera frame (the body is the JPEG). It waits in the game's one slot; a newer
    frame replaces it (dropped). Read it back from `/reading` or the live socket.
    `?camera=NAME` names the camera (one name per camera start): a game reads one camera at
    a time, the one that started last; a camera another one took over gets 409."""
    check_type(request.headers.get("content-type"))
    data = await request.body()
    if not data:
        raise Refused(400, say("frame.empty"))
    if len(data) > _limit(request):
        raise Refused(413, say("frame.too_large", size=len(data)))
    # A frame may end up stored (a table change it holds): refused, not dropped, when the
    # disk is full.
    request.app.state.storage.refuse_if_full()
    gf = request.app.state.hub.put(access.game.id, data,
                                   camera=_camera(request) or POSTED_CAMERA)
    return {"accepted": True, "dropped": gf.dropped}


@router.get("/{game_id}/frames/stats", response_model=schemas.FrameStats, responses=ERRORS)
def frame_stats(request: Request, access: Watch):
    """Frames received, read, dropped (latest wins) and refused for this game, and how
    often another camera took over, counted since the server started."""
    return request.app.state.hub.stats(access.game.id)


@router.get("/{game_id}/photos/{photo_id}", responses={**ERRORS, 200: {
    "content": {"image/jpeg": {}}, "description": "the photo as sent"}})
def get_photo(photo_id: str, request: Request, access: Watch):
    """A stored photo (table, rack, start draw, or the camera frame a reading came from),
    as sent; a HEIC as a JPEG to a browser that does not ask for HEIC by name (Chrome and
    Firefox show none; Safari asks)."""
    data, content_type = service(request).photo(access.game.id, photo_id[:MAX_ID])
    if content_type == "image/heic" and "image/heic" not in request.headers.get("accept", ""):
        data, content_type = shown_as_jpeg(data, content_type,
                                           request.app.state.decode_budget)
    return Response(data, media_type=content_type,
                    headers={"X-Content-Type-Options": "nosniff", "Vary": "Accept",
                             "Cache-Control": "private, max-age=86400"})


@router.websocket("/{game_id}/live")
async def live(ws: WebSocket, game_id: str):
    """The live camera: send binary JPEG frames; receive JSON `{"type": "reading",
    "reading", "stable", "changed", "frame"}` per frame read, `{"type": "dropped"}` for
    a frame replaced by a newer one, `{"type": "refused", "detail", "problems", "reading",
    "frame"}` for a frame too blurred, dark or overexposed to read (the detail says what to
    do; the reading is the table as it stood), `{"type": "game", "game"}` when the game changes,
    `{"type": "error", "detail"}` for a bad frame or message. Text `{"type": "ping"}` gets
    `{"type": "pong"}`. The watch token may listen but not send frames.

    One camera per game: `?camera=NAME` names this socket's camera (else the socket is the
    camera). The camera that starts sending last takes the game's camera over; the one it
    replaced gets `{"type": "camera-taken", "detail"}` and its later frames are refused
    with the same message while the new one streams."""
    svc = ws.app.state.service
    hub = ws.app.state.hub
    token = token_of(ws)
    row = svc.storage.game(game_id) if len(game_id) <= MAX_ID else None
    try:
        if token is None:
            game_access(None, None, play=False)
        if row is None:
            raise HTTPException(404, "no such game")
        access = game_access(token, row, play=False)
    except HTTPException as error:
        await ws.close(code=4000 + error.status_code, reason=str(error.detail)[:120])
        return
    await ws.accept()
    limit = ws.app.state.settings.upload_limit
    camera = _camera(ws)
    queue: asyncio.Queue = asyncio.Queue(maxsize=16)
    hub.subscribe(game_id, queue)

    async def game_message() -> dict:
        view = await run_in_threadpool(svc.view, game_id, with_tokens=access.can_play)
        return {"type": "game", "game": view}

    async def sender():
        try:
            await ws.send_json(await game_message())
            while True:
                message = await queue.get()
                if isinstance(message, str):  # already JSON (frames.FrameHub._deliver)
                    await ws.send_text(message)
                    continue
                if message.get("type") == "game-changed":
                    message = await game_message()
                await ws.send_json(message)
        except (WebSocketDisconnect, RuntimeError, OSError, GameError):
            pass  # the socket went away; the receiving side ends too

    sending = asyncio.get_running_loop().create_task(sender())
    seq = 0
    rate = MessageRate()
    try:
        while (message := await receive_within(ws, rate, lambda m: offer(queue, m))) is not None:
            data, text = message.get("bytes"), message.get("text")
            if data is not None:
                if not access.can_play:
                    offer(queue, {"type": "error", "detail": "the watch link is "
                                      "read-only: it cannot send frames"})
                elif len(data) > limit:
                    offer(queue, {"type": "error", "detail": f"frame too large: "
                                      f"{len(data)} bytes (limit {limit})"})
                elif not data:
                    offer(queue, {"type": "error", "detail": "empty frame"})
                else:
                    try:
                        hub.put(game_id, data, source=queue, seq=seq + 1, camera=camera)
                        seq += 1
                    except CameraTaken as error:
                        offer(queue, {"type": "camera-taken", "detail": str(error),
                                      "message_id": error.message_id})
                continue
            try:
                parsed = json.loads(text or "")
            except ValueError:
                offer(queue, {"type": "error", "detail": "messages are binary JPEG frames "
                                  "or JSON text like {\"type\": \"ping\"}"})
                continue
            kind = parsed.get("type") if isinstance(parsed, dict) else None
            if kind == "ping":
                offer(queue, {"type": "pong"})
            elif kind == "game":
                offer(queue, {"type": "game-changed", "what": "asked"})
            else:
                offer(queue, {"type": "error", "detail": f"unknown message type "
                                  f"{str(kind)[:40]!r}; send binary frames or "
                                  f"{{\"type\": \"ping\"}}"})
    except (WebSocketDisconnect, RuntimeError):
        pass
    except GameError:
        pass
    finally:
        hub.unsubscribe(game_id, queue)
        sending.cancel()
