// The websocket client: protocol v1, binary frame decoding, automatic rejoin after a drop.
// The session id travels in the upgrade URL (`/ws?session=ID`, `&token=` for the driver)
// on every (re)connect, so a proxy in front of several replicas can route on it; a new
// session's id is made here (128 random bits) and its `open` creates the session under it.
import { decodeFrame, num } from './frame.js';
import { isPhone, unslice } from './subscription.js';

// Scalar rows kept by run and step: a cut frame without its scalars (`slice.scalars: "row"`)
// takes them from its step's row, which the server sends first (backend/subscriptions.py:
// only for a row at most ROW_WINDOW = 256 steps back). Subscribed with `scalars: "either"`,
// a live frame's step the client has no row for is that row (the server sent it only there).
const ROWS_KEPT = 1024;

/** A new session id: 16 random bytes, url-safe base64 without padding (22 characters). */
export function newSessionId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class LabClient {
  constructor(url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`) {
    this.url = url;
    this.handlers = new Map();
    this.session = null; // the session joined (from `ready`)
    this.token = null;
    this.id = null; // the id in the URL: the session joined, or the new one to open
    this.pending = null; // the open/join asked for
    this.opening = false; // an `open` on a new id: its not_found at connect is expected
    this.closed = false;
    this.retry = 0;
    this.held = null; // [type, msg] kept while held
    this.subscription = null; // the last `subscribe` (core/subscription.js): resent on every `ready`
    // The lab's page subscribes to a slice on a phone (its catalog's `phone_slice`): a phone
    // then asks, in the upgrade URL, for no frame before its `subscribe` (whole until then).
    this.phoneSlice = false;
    this.received = { frames: 0, bytes: 0, tensors: {} }; // frames, their bytes, tensor names seen (tests)
    this.rows = new Map(); // `${run}:${step}` -> that step's scalars, the newest ROWS_KEPT
    // Back/forward cache: a page kept there with its socket open has it cut by the browser,
    // which logs an error; close it ourselves on the way in and rejoin on the way back.
    this.away = false;
    addEventListener('pagehide', (e) => {
      if (!e.persisted || !this.ws || this.closed) return;
      const ws = this.ws;
      this.ws = null; // its close is ours: no reconnect
      this.away = true;
      ws.close();
    });
    addEventListener('pageshow', (e) => {
      if (!e.persisted || !this.away || this.closed) return;
      this.away = false;
      this.connect();
    });
  }

  keepRows(run, rows) {
    for (const { step, values } of rows) {
      const key = `${run}:${step}`;
      this.rows.delete(key); // re-set: now the newest
      this.rows.set(key, values);
    }
    while (this.rows.size > ROWS_KEPT) this.rows.delete(this.rows.keys().next().value);
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

  /** Connect for `first` (an open or join message); later drops rejoin the session. */
  start(first) {
    if (first.type === 'join' && first.code) return this.joinClass(first.code);
    this.pending = first;
    if (first.type === 'join' && first.session) {
      this.id = first.session;
      this.token = first.token || null;
    }
    this.connect();
  }

  open(lab, params, seed) { this.start({ type: 'open', lab, params, seed }); }

  join(session, token) { this.start({ type: 'join', session, ...(token ? { token } : {}) }); }

  /** Join a class by its code: ask any replica which session it is (`/api/join/CODE`),
   * then connect with that id in the URL, which the proxy routes to the replica running it.
   * A refusal (no such class, a class away, too many wrong codes, busy) is emitted as the
   * protocol `error` the server would have sent. */
  async joinClass(code) {
    const ws = this.ws;
    this.ws = null; // a socket of an earlier try: closed without a reconnect
    if (ws) ws.close();
    let r = null;
    let body = null;
    try {
      r = await fetch(`/api/join/${encodeURIComponent(code)}`);
      body = await r.json();
    } catch { /* offline: try again below */ }
    if (this.closed) return;
    if (r && r.ok) return this.start({ type: 'join', session: body.session });
    if (!r || !body || !body.code) {
      this.emit('connection', { up: false });
      setTimeout(() => this.joinClass(code), Math.min(5000, 250 * 2 ** this.retry++));
      return;
    }
    this.emit('error', { type: 'error', code: body.code, message: body.detail, field: body.field ?? null, key: body.key ?? null, values: body.values ?? null });
  }

  connect() {
    const first = this.pending;
    // A new session: a fresh id on every try (an earlier try may have made the last one).
    if (!this.session && first?.type === 'open') this.id = newSessionId();
    if (this.session) this.id = this.session;
    const q = this.id ? `?session=${encodeURIComponent(this.id)}${this.token ? `&token=${encodeURIComponent(this.token)}` : ''}${this.phoneSlice && isPhone() ? '&wait=subscribe' : ''}` : '';
    const ws = new WebSocket(this.url + q);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
      this.emit('connection', { up: true });
      // The URL joins a known session (as driver with the token); a new one needs its
      // `open`, a class join code its `join`.
      this.opening = !this.session && first?.type === 'open';
      if (this.opening || (!this.session && first?.type === 'join' && !first.session)) ws.send(JSON.stringify(first));
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data !== 'string') {
        const f = decodeFrame(ev.data);
        const r = this.received; // what came over the wire, before unslice expands it
        r.frames += 1;
        if (r.frames === 1) r.firstSlice = f.slice || null; // (tests: a phone's first frame is cut)
        r.bytes += ev.data.byteLength;
        r.slice = f.slice;
        for (const [n, tn] of Object.entries(f.tensors)) r.tensors[n] = { shape: tn.shape, bytes: tn.sent };
        if (f.slice && f.slice.scalars === 'row') f.scalars = { ...this.rows.get(`${f.run}:${f.step}`) };
        else if (this.subscription?.scalars === 'either' && !f.replay && !f.infer && !this.rows.has(`${f.run}:${f.step}`)) {
          // The server sent this step's row in the frame only (subscribe `scalars: "either"`).
          const rows = [{ step: f.step, values: { ...f.scalars } }];
          this.keepRows(f.run, rows);
          this.emit('scalars', { type: 'scalars', run: f.run, step: f.step, values: rows[0].values, rows });
        }
        return this.emit('frame', unslice(f));
      }
      const msg = JSON.parse(ev.data);
      if (this.opening && msg.type === 'error' && msg.code === 'not_found' && msg.field === 'session') {
        this.opening = false; // the new id is not in use yet: the `open` sent creates it
        return;
      }
      if (msg.type === 'ready') {
        this.opening = false;
        this.session = msg.session;
        this.token = msg.token || null;
        if (this.subscription) ws.send(JSON.stringify(this.subscription)); // a new connection starts whole
      }
      if (msg.type === 'scalars') msg.rows = [{ step: msg.step, values: fixValues(msg.values) }];
      if (msg.type === 'history') msg.rows = historyRows(msg);
      if (msg.rows) this.keepRows(msg.run, msg.rows);
      if (msg.type === 'error' && msg.code === 'not_found' && msg.field === 'session') {
        // The session expired while we were away: start a new one with the same request.
        // (Its token still proves this page drove it: a restore takes its class code back.)
        this.lostToken = this.token;
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

  /** Subscribe to a slice (core/subscription.js); kept and resent after every (re)join. */
  subscribe(msg) {
    const same = JSON.stringify(msg) === JSON.stringify(this.subscription);
    this.subscription = msg;
    if (!same && this.session) this.send(msg);
    return !same;
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
