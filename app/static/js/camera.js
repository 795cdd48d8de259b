// Live mode: the rear camera through getUserMedia, JPEG frames to the server over a
// WebSocket (POST /frames when the socket is not up): 2 a second while the view is still,
// a burst once it moved and settled (send_rule.js). Photo mode everywhere else.
// A game reads one camera at a time: each start of the camera has its own name, and when
// another phone's camera takes the game over the server says so; this camera then stops.

// Why this phone films live or takes photos: a catalogue key (the page words it).
export function cameraSupport(forcePhoto) {
  if (forcePhoto) return { live: false, why: "camera.why_chosen" };
  if (!window.isSecureContext) return { live: false, why: "camera.why_insecure" };
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    return { live: false, why: "camera.why_no_camera" };
  }
  return { live: true, why: "camera.why_live" };
}

import { SendRule, WATCH_MS, greyPicture, pictureDifference } from "./send_rule.js";

export class LiveCamera {
  constructor(api, video, { sendRule, maxSide = 1024, onReading, onGame, onChanged, onStatus, onTaken } = {}) {
    this.api = api;
    this.video = video;
    this.rule = sendRule || new SendRule();
    this.maxSide = maxSide;
    this.onReading = onReading || (() => {});
    this.onGame = onGame || (() => {});
    this.onChanged = onChanged || (() => {});
    this.onStatus = onStatus || (() => {});
    this.onTaken = onTaken || (() => {});
    // The same name over socket reconnects and posted frames: the server tells this camera
    // from another phone's by it.
    this.name = (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`).slice(0, 64);
    this.stream = null;
    this.socket = null;
    this.timer = null;
    this.posting = false;
    this.sent = 0;
    this.canvas = document.createElement("canvas");
    this.lookCanvas = document.createElement("canvas");
    this.lastLook = null;
    this.lastDiff = 0; // the latest look's difference from the one before (tests read it)
  }

  async start() {
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: false,
        video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 960 } },
      });
    } catch (e) {
      const why = e && e.name === "NotAllowedError" ? "page.camera_denied"
        : e && e.name === "NotFoundError" ? "page.camera_none" : "page.camera_failed";
      throw new Error(why);
    }
    this.video.srcObject = this.stream;
    this.video.muted = true;
    this.video.playsInline = true;
    await this.video.play().catch(() => {});
    this.connect();
    this.timer = setInterval(() => this.look(), WATCH_MS);
  }

  connect() {
    if (this.stopped) return;
    let socket;
    try {
      socket = new WebSocket(this.api.liveSocketUrl(this.name));
    } catch (_e) {
      this.socket = null;
      return;
    }
    socket.binaryType = "arraybuffer";
    socket.onopen = () => this.onStatus("live");
    socket.onmessage = (event) => {
      let msg;
      try { msg = JSON.parse(event.data); } catch (_e) { return; }
      if (msg.type === "reading" && msg.reading) this.onReading(msg.reading, msg.stable);
      else if (msg.type === "game" && msg.game) this.onGame(msg.game);
      else if (msg.type === "game-changed") this.onChanged(msg.what);
      else if (msg.type === "error") this.onStatus("error", msg.detail && { message: msg.detail, messageId: msg.message_id });
      // A frame too blurred, dark or overexposed: never the table; the words say what to do.
      else if (msg.type === "refused") this.onStatus("refused", msg.detail && { message: msg.detail, messageId: msg.message_id });
      else if (msg.type === "camera-taken") this.taken(msg.detail, msg.message_id);
    };
    socket.onclose = () => {
      this.socket = null;
      this.onStatus("reconnecting");
      if (!this.stopped) setTimeout(() => this.connect(), 2000);
    };
    this.socket = socket;
  }

  async grab() {
    const v = this.video;
    if (!v.videoWidth || !v.videoHeight) return null;
    const scale = Math.min(1, this.maxSide / Math.max(v.videoWidth, v.videoHeight));
    const w = Math.round(v.videoWidth * scale);
    const h = Math.round(v.videoHeight * scale);
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    this.canvas.getContext("2d").drawImage(v, 0, 0, w, h);
    return new Promise((resolve) => this.canvas.toBlob(resolve, "image/jpeg", 0.85));
  }

  // Ten times a second: has the view moved since the last look? The rule says when to send.
  look() {
    if (document.hidden) return;
    const v = this.video;
    if (!v.videoWidth || !v.videoHeight) return;
    const picture = greyPicture(v, this.lookCanvas);
    this.lastDiff = pictureDifference(picture, this.lastLook);
    this.lastLook = picture;
    if (this.rule.look(performance.now(), this.lastDiff)) this.tick();
  }

  async tick() {
    if (document.hidden) return;
    const s = this.socket;
    // Latest wins: a frame is only sent once the previous one has left the phone.
    if (s && s.readyState === WebSocket.OPEN) {
      if (s.bufferedAmount > 0) return;
      const blob = await this.grab();
      if (blob) { s.send(await blob.arrayBuffer()); this.sent++; }
      return;
    }
    if (this.posting) return;
    this.posting = true;
    try {
      const blob = await this.grab();
      if (blob) { await this.api.frame(blob, this.name); this.sent++; }
    } catch (e) {
      // A dropped frame is no loss: the next one follows. 409: another phone has the camera.
      if (e && e.status === 409) this.taken(e.message, e.messageId);
    } finally {
      this.posting = false;
    }
  }

  taken(detail, messageId) {
    if (this.stopped) return;
    this.stop();
    this.onTaken(detail || "", messageId || null);
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.socket) this.socket.close();
    if (this.stream) this.stream.getTracks().forEach((t) => t.stop());
  }
}
