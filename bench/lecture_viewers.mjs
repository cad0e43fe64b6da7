// `node bench/lecture_viewers.mjs SPEC_JSON`: hundreds of websocket clients of one Shaomai
// session in one Node process (bench/lecture.py); no npm packages (bench/ws_client.mjs).
//
// Python clients cannot carry 1,000 viewers on a 2-core machine without measuring themselves;
// one Node process holds hundreds cheaply. Talks like bench/clients.py: one JSON line when
// ready, then `go` and `stop` lines on stdin, the result as the last JSON line. Roles:
// - driver:  opens spec.lab, plays at spec.speed on `go`; every spec.probe_s sends `share` and
//            times its `shared` reply (the control round trip); pauses on `stop`.
// - viewers: spec.n viewers of spec.session (`/ws?session=ID` joins on connect), each sends
//            spec.subscribe once ready. With spec.storm they all connect at once on `go`.
// Per viewer: every frame's step, lag (receipt − the frame's server time `t`, ms), the oldest
// its latest frame got, bytes received, and whether the server closed it.

import { createInterface } from "node:readline";
import { RawWebSocket } from "./ws_client.mjs";

const spec = JSON.parse(process.argv[2]);
const now = () => (performance.timeOrigin + performance.now()) / 1000; // Unix seconds
const say = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const lines = createInterface({ input: process.stdin });
const waiting = [], pending = []; // readers waiting for a line; lines nobody asked for yet
const deliver = (l) => (waiting.length ? waiting.shift()(l) : pending.push(l));
lines.on("line", (l) => deliver(l.trim()));
lines.on("close", () => { for (let i = 0; i < 4; i++) deliver("stop"); }); // the parent left
const nextLine = () => new Promise((res) => (pending.length ? res(pending.shift()) : waiting.push(res)));
const window_ = { open: false, t0: 0, tEnd: 0, stopping: false };

function header(buf) {
  return JSON.parse(buf.toString("utf8", 4, 4 + buf.readUInt32LE(0)));
}

// A frame's step and server time without parsing its whole header (a full JSON.parse was
// ≈ 25 µs a frame, a quarter of a viewer's CPU): the header opens with `type` then `step`
// and ends with the session's extra fields (`run`, then `t`: backend/wire.py). One frame in
// CHECK_EVERY is parsed whole and compared; a mismatch is counted (`stamp_mismatches`).
const CHECK_EVERY = 64;
const STEP = /^\{"type":"frame","step":(\d+)/;
let stamped = 0, mismatches = 0;
function stamp(buf) {
  const s = buf.toString("latin1", 4, 4 + buf.readUInt32LE(0)); // the fields read are ASCII
  const m = STEP.exec(s), i = s.lastIndexOf('"t":');
  const out = m && i >= 0 ? { step: +m[1], t: parseFloat(s.slice(i + 4)) } : header(buf);
  if (++stamped % CHECK_EVERY === 0) {
    const h = header(buf);
    if (h.step !== out.step || h.t !== out.t) mismatches += 1;
  }
  return out;
}

class Viewer {
  constructor(url, subscribe) {
    this.steps = []; this.lags = []; this.maxAge = 0; this.maxAgeStep = null; this.lastT = null;
    this.bytes = 0; this.texts = 0; this.closed = false; this.error = null;
    this.t0 = now(); this.readyS = null;
    this.ready = new Promise((resolve) => { this._ready = resolve; });
    const ws = new RawWebSocket(url);
    this.ws = ws;
    ws.onmessage = (ev) => this.onMessage(ev.data, subscribe);
    ws.onerror = () => { this.error = this.error || "error"; this._ready(false); };
    ws.onclose = (ev) => {
      if (!window_.stopping) { this.closed = true; this.error = `closed ${ev.code}`; }
      this._ready(false);
    };
  }

  onMessage(data, subscribe) {
    const r = now();
    if (typeof data === "string") {
      this.texts += 1;
      if (window_.open) this.bytes += data.length;
      if (this.readyS === null) {
        const msg = JSON.parse(data);
        if (msg.type === "ready") {
          this.readyS = r - this.t0;
          this.session = msg.session;
          if (subscribe) this.ws.send(JSON.stringify(subscribe));
          this._ready(true);
        } else if (msg.type === "error") { this.error = msg.code; this._ready(false); }
      }
      return;
    }
    if (!window_.open) return;
    this.bytes += data.byteLength;
    const h = stamp(data);
    if (this.lastT !== null && r - this.lastT > this.maxAge) {
      this.maxAge = r - this.lastT;
      this.maxAgeStep = h.step; // the frame that ended the longest wait
    }
    this.lastT = h.t;
    this.steps.push(h.step);
    this.lags.push(Math.round((r - h.t) * 10000) / 10); // ms, 0.1 ms
  }

  send(msg) { if (this.ws.readyState === 1) this.ws.send(JSON.stringify(msg)); }

  result() {
    const end = this.lastT === null ? this.maxAge : Math.max(this.maxAge, window_.tEnd - this.lastT);
    return {
      steps: this.steps, lags: this.lags, max_age_ms: Math.round(end * 10000) / 10,
      max_age_step: end > this.maxAge ? null : this.maxAgeStep,
      bytes: this.bytes, closed: this.closed, error: this.error,
      ready_ms: this.readyS === null ? null : Math.round(this.readyS * 1000),
    };
  }
}

async function driver() {
  const v = new Viewer(spec.url);
  const opened = new Promise((resolve) => {
    v.ws.onopen = () => v.send({ type: "open", lab: spec.lab, params: spec.params || {}, seed: 0 });
    const base = v.onMessage.bind(v);
    v.onMessage = (data) => {
      base(data);
      if (typeof data === "string") {
        const msg = JSON.parse(data);
        if (msg.type === "shared" && v.probeT !== undefined) {
          v.rtts.push([v.probeT, Math.round((now() - v.probeT) * 10000) / 10]);
          v.probeT = undefined;
        }
      } else resolve();
    };
  });
  v.rtts = [];
  if (!(await v.ready)) throw new Error(`driver could not open: ${v.error}`);
  await opened; // the step-0 frame
  // A teacher shares before the class joins: the lab moves into a process of its own then
  // (backend Session.move_to_process), not in the measured window.
  await new Promise((resolve) => {
    const base = v.onMessage.bind(v);
    v.onMessage = (data) => {
      base(data);
      if (typeof data === "string" && JSON.parse(data).type === "shared") { v.onMessage = base; resolve(); }
    };
    v.send({ type: "share" });
  });
  say({ ready: true, session: v.session });
  await nextLine(); // go
  window_.open = true; window_.t0 = now();
  v.send({ type: "control", action: "play", speed: spec.speed });
  let missed = 0;
  const timer = setInterval(() => {
    if (v.probeT !== undefined) { missed += 1; return; } // the last one still unanswered
    v.probeT = now(); v.send({ type: "share" });
  }, (spec.probe_s || 0.1) * 1000);
  await nextLine(); // stop
  clearInterval(timer);
  window_.open = false; window_.tEnd = now(); window_.stopping = true;
  v.send({ type: "control", action: "pause" });
  const unanswered = v.probeT === undefined ? 0 : now() - v.probeT;
  await new Promise((r) => setTimeout(r, 200));
  v.ws.close();
  return { t0: window_.t0, t_end: window_.tEnd, viewer: v.result(), rtts: v.rtts,
           probes_skipped: missed, unanswered_s: unanswered };
}

async function viewers() {
  const url = `${spec.url}?session=${spec.session}`;
  let conns = [];
  const connectAll = async () => {
    conns = Array.from({ length: spec.n }, () => new Viewer(url, spec.subscribe));
    // Bounded: a viewer not ready within spec.join_timeout_s counts as not joined.
    const limit = new Promise((r) => setTimeout(r, (spec.join_timeout_s || 120) * 1000, false));
    const ok = await Promise.all(conns.map((c) => Promise.race([c.ready, limit])));
    return ok.filter(Boolean).length;
  };
  let joined = null;
  if (!spec.storm) joined = await connectAll();
  say({ ready: true, joined });
  await nextLine(); // go
  window_.open = true; window_.t0 = now();
  if (spec.storm) { joined = await connectAll(); say({ joined }); }
  await nextLine(); // stop
  window_.open = false; window_.tEnd = now(); window_.stopping = true;
  for (const c of conns) c.ws.close();
  return { t0: window_.t0, t_end: window_.tEnd, joined, cpu: process.cpuUsage(),
           stamps_checked: Math.floor(stamped / CHECK_EVERY), stamp_mismatches: mismatches,
           viewers: conns.map((c) => c.result()) };
}

const result = await (spec.role === "driver" ? driver() : viewers());
result.cpu_s = (process.cpuUsage().user + process.cpuUsage().system) / 1e6;
// Pipes are asynchronous in Node: exit once the result line is flushed, not before.
process.stdout.write(JSON.stringify({ result }) + "\n", () => process.exit(0));
