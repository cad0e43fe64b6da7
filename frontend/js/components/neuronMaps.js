// Many small heatmaps on one canvas (every neuron's output over the input plane): each map
// goes through a 256-entry colour lookup table into an ImageData, is put on a small scratch
// canvas with putImageData, then drawn scaled. A 48×48 map costs well under a millisecond.
//
// Maps arrive as decoded tensors [K, G, G] whose row 0 is the *bottom* of the plane
// (x2 = −extent), so rows are flipped on the way to the screen.

/** TensorFlow Playground's diverging scale: orange (−) · light grey (0) · blue (+). */
export const PLAYGROUND_STOPS = ['#f59322', '#e8eaeb', '#0877bd'];

function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** A colour lookup table: 256 RGBA entries interpolated through the hex colour stops. */
export function makeLut(stops = PLAYGROUND_STOPS) {
  const cols = stops.map(rgb);
  const out = new Uint8ClampedArray(256 * 4);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (cols.length - 1);
    const a = Math.min(cols.length - 2, Math.floor(t));
    const f = t - a;
    for (let c = 0; c < 3; c++) out[i * 4 + c] = cols[a][c] + (cols[a + 1][c] - cols[a][c]) * f;
    out[i * 4 + 3] = 255;
  }
  return out;
}

export const DIVERGING = makeLut();

/** [lo, hi] symmetric around 0 covering the tensor (for a diverging LUT). */
export function symmetricRange(tensor) {
  const m = Math.max(Math.abs(tensor.min ?? 0), Math.abs(tensor.max ?? 0)) || 1;
  return [-m, m];
}

// value -> LUT index for every u8 level of a tensor, once per (tensor, range).
function levels(tensor, lo, hi) {
  const idx = new Uint8Array(256);
  const span = (tensor.max - tensor.min) / 255;
  const scale = 255 / (hi - lo || 1);
  for (let q = 0; q < 256; q++) {
    const v = tensor.min + span * q;
    idx[q] = Math.max(0, Math.min(255, Math.round((v - lo) * scale)));
  }
  return idx;
}

const scratch = document.createElement('canvas');
const sctx = scratch.getContext('2d');
let image = null;

/**
 * Paint map k of tensor [K, G, G] into ctx at (x, y), size × size (CSS pixels of ctx).
 * opts: lut (default DIVERGING), range [lo, hi] (default symmetric around 0), alpha.
 */
export function paintMap(ctx, tensor, k, x, y, size, { lut = DIVERGING, range = null, alpha = 1 } = {}) {
  const [rows, cols] = tensor.shape.slice(-2);
  const [lo, hi] = range || symmetricRange(tensor);
  if (scratch.width !== cols || scratch.height !== rows) {
    scratch.width = cols;
    scratch.height = rows;
    image = null;
  }
  image = image || sctx.createImageData(cols, rows);
  const px = image.data;
  const off = k * rows * cols;
  if (tensor.q) {
    const idx = levels(tensor, lo, hi);
    for (let r = 0; r < rows; r++) {
      const src = off + (rows - 1 - r) * cols; // row 0 of the tensor is the bottom
      for (let c = 0; c < cols; c++) {
        const li = idx[tensor.q[src + c]] * 4, o = (r * cols + c) * 4;
        px[o] = lut[li]; px[o + 1] = lut[li + 1]; px[o + 2] = lut[li + 2]; px[o + 3] = 255;
      }
    }
  } else {
    const scale = 255 / (hi - lo || 1);
    for (let r = 0; r < rows; r++) {
      const src = off + (rows - 1 - r) * cols;
      for (let c = 0; c < cols; c++) {
        const li = Math.max(0, Math.min(255, Math.round((tensor.data[src + c] - lo) * scale))) * 4;
        const o = (r * cols + c) * 4;
        px[o] = lut[li]; px[o + 1] = lut[li + 1]; px[o + 2] = lut[li + 2]; px[o + 3] = 255;
      }
    }
  }
  sctx.putImageData(image, 0, 0);
  ctx.save();
  ctx.globalAlpha = alpha;
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(scratch, x, y, size, size);
  ctx.restore();
}

/**
 * A canvas of small maps. `drawAt(items)` paints maps at given positions (a network
 * diagram lays them out); `drawGrid(rows)` lays out one row of maps per layer itself.
 * items: [{tensor, k, x, y, size, lut?, range?, alpha?}] or {x, y, size, fill} for an empty box.
 */
export function neuronMaps(el, { className = 'neuron-maps' } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = className;
  el.append(canvas);
  const ctx = canvas.getContext('2d');
  let cssW = 0, cssH = 0;

  function resize(w, h) {
    const dpr = window.devicePixelRatio || 1;
    if (w !== cssW || h !== cssH || canvas.width !== Math.round(w * dpr)) {
      cssW = w; cssH = h;
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = `${w}px`; // CSSOM: allowed by the content security policy
      canvas.style.height = `${h}px`;
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
  }

  function drawAt(items, w, h) {
    resize(w, h);
    for (const it of items) {
      if (it.tensor) paintMap(ctx, it.tensor, it.k, it.x, it.y, it.size, it);
      else {
        ctx.fillStyle = it.fill || '#eee';
        ctx.fillRect(it.x, it.y, it.size, it.size);
      }
    }
  }

  /** rows: [{label, tensor}] (tensor [K, G, G]); one row per tensor, K maps side by side. */
  function drawGrid(rows, { size = 48, gap = 6, labelWidth = 90 } = {}) {
    const most = Math.max(1, ...rows.map((r) => r.tensor.shape[0]));
    const w = labelWidth + most * (size + gap), h = rows.length * (size + gap);
    const items = [];
    rows.forEach((r, i) => {
      for (let k = 0; k < r.tensor.shape[0]; k++) items.push({ tensor: r.tensor, k, x: labelWidth + k * (size + gap), y: i * (size + gap), size });
    });
    drawAt(items, w, h);
    ctx.fillStyle = getComputedStyle(el).color;
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    rows.forEach((r, i) => ctx.fillText(r.label, 0, i * (size + gap) + size / 2));
  }

  return { el: canvas, ctx, drawAt, drawGrid, resize };
}
