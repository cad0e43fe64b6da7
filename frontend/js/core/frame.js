// Binary frame decoding (protocol v1, docs/protocol.md). The only place bytes become tensors.

const utf8 = new TextDecoder();

// Non-finite scalars travel as "NaN", "Infinity", "-Infinity".
export const num = (v) => (typeof v === 'string' ? Number(v) : v);

// So do non-finite numbers in a frame's meta (a diverged arm's), flagged `nonfinite`: read back.
const NONFINITE = new Set(['NaN', 'Infinity', '-Infinity']);
const revive = (v) => (typeof v === 'string' ? (NONFINITE.has(v) ? Number(v) : v)
  : Array.isArray(v) ? v.map(revive)
    : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)])) : v);

function f16ToF32(u16) {
  if (typeof Float16Array !== 'undefined') {
    return Float32Array.from(new Float16Array(u16.buffer, u16.byteOffset, u16.length));
  }
  const out = new Float32Array(u16.length);
  for (let i = 0; i < u16.length; i++) {
    const h = u16[i], s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    out[i] = e === 0 ? s * 2 ** -14 * (m / 1024)
      : e === 31 ? (m ? NaN : s * Infinity) : s * 2 ** (e - 15) * (1 + m / 1024);
  }
  return out;
}

/** A cut's causal map sent as its lower triangle (row i: its first i + 1 levels) -> every
 * [T, T] matrix of `shape` whole, level 0 above the diagonal. */
function unpackTril(packed, shape) {
  const T = shape[shape.length - 1];
  const mats = packed.length / ((T * (T + 1)) / 2);
  const out = new Uint8Array(mats * T * T);
  let k = 0;
  for (let m = 0; m < mats; m++) {
    for (let i = 0; i < T; i++) {
      out.set(packed.subarray(k, k + i + 1), (m * T + i) * T);
      k += i + 1;
    }
  }
  return out;
}

/** ArrayBuffer -> {step, run, scalars, tensors: {name: {shape, data, labels, min, max, q}}, meta, replay, infer} */
export function decodeFrame(buf) {
  const n = new DataView(buf).getUint32(0, true);
  const header = JSON.parse(utf8.decode(new Uint8Array(buf, 4, n)));
  const base = 4 + n;
  const tensors = {};
  for (const t of header.tensors) {
    const at = base + t.offset;
    let data, q = null;
    if (t.dtype === 'f32') data = new Float32Array(buf, at, t.length / 4);
    else if (t.dtype === 'f16') data = f16ToF32(new Uint16Array(buf, at, t.length / 2));
    else {
      q = new Uint8Array(buf, at, t.length); // raw levels: canvases map them through a colour LUT
      if (t.packed === 'tril') q = unpackTril(q, t.shape);
      const span = (t.max - t.min) / 255;
      data = new Float32Array(q.length);
      for (let i = 0; i < q.length; i++) data[i] = t.min + span * q[i];
    }
    tensors[t.name] = { shape: t.shape, data, q, labels: t.labels, min: t.min, max: t.max, sent: t.length };
  }
  const scalars = {};
  for (const [k, v] of Object.entries(header.scalars || {})) scalars[k] = num(v);
  return {
    step: header.step, run: header.run, scalars, tensors,
    meta: (header.nonfinite ? revive(header.meta) : header.meta) || {},
    replay: !!header.replay, infer: !!header.infer, slice: header.slice || null, // slice: a subscription's cut
  };
}

/** Row-major [rows][cols] view of a 2-D tensor (plotly wants nested arrays). */
export function rows2d(t) {
  const [r, c] = t.shape.slice(-2);
  const out = new Array(r);
  for (let i = 0; i < r; i++) out[i] = Array.from(t.data.subarray(i * c, (i + 1) * c));
  return out;
}
