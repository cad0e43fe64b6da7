// The page subscribes to what is on screen (docs/streams.md): a phone is sent the one layer
// (and head) it shows, a desktop everything; a class the teacher switched to low bandwidth
// (view key `low`) gets u8 maps at half resolution and fewer frames. Any lab can use it:
// follow(client, store, want) with want() -> {layer, head} | null (everything).
// `unslice` undoes the server's pooling for drawing (each value repeated over its 2 × 2
// cells) and marks a head's slice with `first` (the head it is), so views draw as before.
// A cut frame carries only the meta that changed since the last frame this connection got:
// `meta._keep: true`: the keys absent are as in that frame (less `meta._drop`); false: whole.
// A subscription with `position` gets one row of the lab's per-position outputs (gpt's
// next-token candidates) and one column of those whose last axis is the position (gpt's
// residual norms): `unslice` puts it back at its index.

import { viewing } from '../components/viewing.js';

export const PHONE = '(max-width: 700px)';
export const isPhone = () => typeof matchMedia === 'function' && matchMedia(PHONE).matches;

/** The subscribe message for a slice and the class's quality (only viewers go low). */
export function subscribeMessage(slice, { low = false, viewer = true } = {}) {
  const msg = { type: 'subscribe', tensors: '*', scalars: 'either' }; // rows kept; a frame's is its row
  if (slice && Number.isInteger(slice.layer)) msg.layer = slice.layer;
  if (slice && Number.isInteger(slice.head)) msg.head = slice.head;
  if (slice && Number.isInteger(slice.position)) msg.position = slice.position;
  msg.quality = low && viewer ? 'low' : 'full';
  return msg;
}

/** Keep the client subscribed to want(); again whenever the selection, the role, the class's
 * quality, the screen width or the step looked back at changes. A page scrubbed back to a
 * recorded step is sent everything (a seek's frame is whole). Only the scrubber says so, not
 * the shown step being behind the newest: a row that arrives while a slow phone draws would
 * flip it to whole frames for a frame. Returns {update} for a lab's own triggers. */
export function follow(client, store, want) {
  // Changes that land together (a joining phone gets the class's layer, then its head) send
  // one subscription, at the end of the task: each would bring the latest frame again.
  let queued = false;
  const update = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(send);
  };
  const send = () => {
    queued = false;
    const past = viewing.get();
    const slice = past === null ? want() : null;
    const msg = subscribeMessage(slice, { low: !!store.get('low'), viewer: store.get('role') !== 'driver' });
    // The client skips a repeat and resends it after a reconnect. A page scrubbed back asks
    // for its step again: the frame it shows was cut to the old subscription.
    if (!client.subscribe(msg)) return;
    if (past !== null) client.send({ type: 'seek', step: past });
  };
  for (const key of ['layer', 'head', 'low', 'role']) store.on(key, update);
  viewing.on(update);
  if (typeof matchMedia === 'function') matchMedia(PHONE).addEventListener('change', update);
  update();
  return { update };
}

// The meta of the last cut frame received (one client a page; every frame passes here, in
// order, so it is what the server last sent this connection).
let lastMeta = {};

/** A decoded frame made drawable as a full one: its meta whole again, pooled maps expanded. */
export function unslice(frame) {
  const s = frame.slice;
  if (!s) return frame;
  const m = frame.meta;
  if (m && '_keep' in m) {
    const meta = m._keep ? { ...lastMeta } : {};
    for (const k of m._drop || []) delete meta[k];
    for (const [k, v] of Object.entries(m)) if (k !== '_keep' && k !== '_drop') meta[k] = v;
    frame.meta = lastMeta = meta;
  }
  // One token position's rows (`position` subscribed): put each back at its index, so a
  // view reads meta[key][p] and tensor row p as from a whole frame (other rows empty).
  const p = s.position;
  for (const [name, rows] of Object.entries(Number.isInteger(p) ? s.rows || {} : {})) {
    const tn = frame.tensors[name];
    if (tn) frame.tensors[name] = expandRow(tn, p, rows);
    else if (m && Array.isArray(m[name]) && frame.meta[name] === m[name]) {
      const full = Array.from({ length: rows }, () => []);
      full[p] = m[name][0];
      frame.meta[name] = full;
    }
  }
  for (const [name, cols] of Object.entries(Number.isInteger(p) ? s.cols || {} : {})) {
    const tn = frame.tensors[name];
    if (tn) frame.tensors[name] = expandColumn(tn, p, cols);
  }
  for (const [name, full] of Object.entries(s.pooled || {})) {
    const tn = frame.tensors[name];
    if (tn) frame.tensors[name] = expand(tn, full, s.scale || 2);
  }
  if (Number.isInteger(s.head)) {
    for (const [name, tn] of Object.entries(frame.tensors)) {
      if (name.startsWith('blocks.') && tn.shape.length === 3 && tn.shape[0] === 1) tn.first = s.head;
    }
  }
  return frame;
}

function expandRow(tn, p, rows) {
  const width = tn.data.length;
  const data = new Float32Array(rows * width);
  data.set(tn.data, p * width);
  return { ...tn, shape: [rows, ...tn.shape.slice(1)], data, q: null };
}

function expandColumn(tn, p, cols) {
  const n = tn.data.length; // [..., 1]: one value a row
  const data = new Float32Array(n * cols);
  for (let i = 0; i < n; i++) data[i * cols + p] = tn.data[i];
  return { ...tn, shape: [...tn.shape.slice(0, -1), cols], data, q: null };
}

function expand(tn, [R, C], k) {
  const shape = tn.shape;
  const r = shape[shape.length - 2], c = shape[shape.length - 1];
  const n = tn.data.length / (r * c);
  const data = new Float32Array(n * R * C);
  for (let m = 0; m < n; m++) {
    for (let i = 0; i < R; i++) {
      const src = m * r * c + Math.floor(i / k) * c, dst = (m * R + i) * C;
      for (let j = 0; j < C; j++) data[dst + j] = tn.data[src + Math.floor(j / k)];
    }
  }
  return { ...tn, shape: [...shape.slice(0, -2), R, C], data, q: null, pooled: k };
}
