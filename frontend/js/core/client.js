// The websocket client: protocol v1, binary frame decoding, automatic rejoin after a drop.
import { decodeFrame, num } from './frame.js';

export class LabClient {
  constructor(url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`) {
    this.url = url;
    this.handlers = new Map();
    this.session = null;
    this.token = null;
    this.pending = null; // the open/join to send once connected
    this.closed = false;
    this.retry = 0;
    this.held = null; // [type, msg] kept while held
  }

  /** Keep what arrives (messages, connection changes) until release(): the page connects
   * before its view and handlers exist. */
  hold() { this.held = this.held || []; }

  release() {
    const held = this.held || [];
    this.held = null;
    for (const [type, msg] of held) this.emit(type, msg);
  }

  on(type, fn) {
    if (!this.handlers.has(type)) this.handlers.set(type, []);
    this.handlers.get(type).push(fn);
    return this;
  }

  emit(type, msg) {
    if (this.held) { this.held.push([type, msg]); return; }
    for (const fn of this.handlers.get(type) || []) fn(msg);
  }

  /** Connect and send `first` (an open or join message); later drops rejoin the session. */
  start(first) {
    this.pending = first;
    this.connect();
  }

  open(lab, params, seed) { this.start({ type: 'open', lab, params, seed }); }

  join(session, token) { this.start({ type: 'join', session, ...(token ? { token } : {}) }); }

  connect() {
    const ws = new WebSocket(this.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
      this.emit('connection', { up: true });
      // After a drop, rejoin the same session (as driver when we hold its token).
      const first = this.session ? { type: 'join', session: this.session, ...(this.token ? { token: this.token } : {}) } : this.pending;
      ws.send(JSON.stringify(first));
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data !== 'string') return this.emit('frame', decodeFrame(ev.data));
      const msg = JSON.parse(ev.data);
      if (msg.type === 'ready') {
        this.session = msg.session;
        if (msg.token) this.token = msg.token;
      }
      if (msg.type === 'scalars') msg.rows = [{ step: msg.step, values: fixValues(msg.values) }];
      if (msg.type === 'history') msg.rows = historyRows(msg);
      if (msg.type === 'error' && msg.code === 'not_found' && msg.field === 'session') {
        // The session expired while we were away: start a new one with the same request.
        this.session = null;
        this.token = null;
      }
      this.emit(msg.type, msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.emit('connection', { up: false });
      if (this.closed) return;
      const delay = Math.min(5000, 250 * 2 ** this.retry++);
      setTimeout(() => this.connect(), delay);
    };
  }

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }

  control(action, extra = {}) { return this.send({ type: 'control', action, ...extra }); }

  close() {
    this.closed = true;
    if (this.ws) this.ws.close();
  }
}

function fixValues(values) {
  const out = {};
  for (const [k, v] of Object.entries(values)) out[k] = num(v);
  return out;
}

function historyRows(msg) {
  const names = Object.keys(msg.values);
  return msg.steps.map((step, i) => {
    const values = {};
    for (const n of names) {
      const v = msg.values[n][i];
      if (v !== null) values[n] = num(v);
    }
    return { step, values };
  });
}
