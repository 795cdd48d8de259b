// Sound, vibration and speech for the turn timer and verdicts; each can be switched off
// and the choice is kept on this phone.

import { speechLang } from "./i18n.js";

const KEY = "rummikub.alerts";

export class Alerts {
  constructor() {
    let saved = {};
    try { saved = JSON.parse(localStorage.getItem(KEY) || "{}"); } catch (_e) { saved = {}; }
    this.sound = saved.sound ?? true;
    this.speech = saved.speech ?? true;
    this.vibrate = saved.vibrate ?? true;
    this.audio = null;
    this.spoken = []; // what was said, newest last (tests read it)
    this.events = []; // warnings and ticks given, newest last (tests read it)
  }

  note(kind) {
    this.events.push(kind);
    if (this.events.length > 50) this.events.shift();
  }

  save() {
    localStorage.setItem(KEY, JSON.stringify({ sound: this.sound, speech: this.speech, vibrate: this.vibrate }));
  }

  // Browsers start audio only after a tap: called from the first click on the page.
  unlock() {
    if (this.audio || !(window.AudioContext || window.webkitAudioContext)) return;
    try { this.audio = new (window.AudioContext || window.webkitAudioContext)(); } catch (_e) { this.audio = null; }
  }

  beep(freq = 880, ms = 90, gain = 0.25) {
    if (!this.sound || !this.audio) return;
    const ctx = this.audio;
    const osc = ctx.createOscillator();
    const vol = ctx.createGain();
    osc.frequency.value = freq;
    vol.gain.setValueAtTime(gain, ctx.currentTime);
    vol.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + ms / 1000);
    osc.connect(vol).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + ms / 1000 + 0.02);
  }

  buzz(pattern) {
    if (this.vibrate && navigator.vibrate) {
      try { navigator.vibrate(pattern); } catch (_e) { /* not allowed here */ }
    }
  }

  warning() { this.note("warning"); this.beep(660, 250); this.buzz([200, 100, 200]); }
  tick(last) {
    this.note(last ? "time-up" : "tick");
    this.beep(last ? 1320 : 990, last ? 400 : 60);
    if (last) this.buzz(600);
  }

  say(text) {
    if (!text) return;
    this.spoken.push(text);
    if (this.spoken.length > 20) this.spoken.shift();
    if (!this.speech || !window.speechSynthesis) return;
    try {
      window.speechSynthesis.cancel();
      // The voice of the page's language (a Dutch sentence in an English voice is noise).
      const utterance = new SpeechSynthesisUtterance(text);
      utterance.lang = speechLang();
      window.speechSynthesis.speak(utterance);
    } catch (_e) { /* speech is a courtesy */ }
  }
}
