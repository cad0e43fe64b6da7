// The colour side of the map kit (mapGrid.js re-exports it): colour lookup tables and
// paintMap, which paints a map of values into a canvas with one putImageData.
const STOPS = {
  viridis: ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'],
  diverging: ['#f59322', '#e8eaeb', '#0877bd'], // TensorFlow Playground: orange (−) · grey (0) · blue (+)
  greys: ['#ffffff', '#141414'],
  blues: ['#f7fbff', '#6baed6', '#08306b'],
  rdbu: ['#2166ac', '#67a9cf', '#f7f7f7', '#ef8a62', '#b2182b'], // blue (−) · white (0) · red (+): signed weights
};
const MASKED = [236, 233, 226]; // cells a mask hides: page-like, not "value 0"

function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** A colour lookup table: 256 RGBA entries interpolated through '#rrggbb' stops. */
export function makeLut(stops = STOPS.viridis) {
  const cols = stops.map(rgb);
  const out = new Uint8ClampedArray(256 * 4);
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (cols.length - 1);
    const a = Math.min(cols.length - 2, Math.floor(x)), f = x - a;
    for (let c = 0; c < 3; c++) out[i * 4 + c] = cols[a][c] + (cols[a + 1][c] - cols[a][c]) * f;
    out[i * 4 + 3] = 255;
  }
  return out;
}

/** The named tables: viridis, diverging (the playground's), greys, blues, rdbu. */
export const LUTS = Object.fromEntries(Object.entries(STOPS).map(([k, v]) => [k, makeLut(v)]));
export const PLAYGROUND_STOPS = STOPS.diverging;

export const lutOf = (c) => (c instanceof Uint8ClampedArray ? c : Array.isArray(c) ? makeLut(c) : LUTS[c] || LUTS.viridis);

const scratch = document.createElement('canvas');
const sctx = scratch.getContext('2d');
let image = null;

/**
 * Paint rows × cols values (row-major from `offset`) into ctx at (x, y, w, h): one
 * putImageData. opts: lut (a makeLut table, default viridis), range [lo, hi] (default [0, 1]),
 * masked(i, j) -> true paints the cell as hidden, flipRows (row 0 at the bottom), smooth,
 * log (colour by log10 of the value; range then in log10 units), transform (v -> the value
 * coloured, e.g. a threshold), alpha. A non-finite value is left transparent.
 */
export function paintMap(ctx, data, offset, rows, cols, x, y, w, h, opts = {}) {
  const { lut = LUTS.viridis, range = [0, 1], masked = null, flipRows = false, smooth = false, log = false, transform = null, alpha = 1 } = opts;
  if (scratch.width !== cols || scratch.height !== rows) { scratch.width = cols; scratch.height = rows; image = null; }
  image = image || sctx.createImageData(cols, rows);
  const px = image.data;
  const lo = range[0], scale = 255 / (range[1] - range[0] || 1);
  for (let r = 0; r < rows; r++) {
    const i = flipRows ? rows - 1 - r : r; // the map's row drawn on screen row r
    const src = offset + i * cols;
    for (let j = 0; j < cols; j++) {
      const o = (r * cols + j) * 4;
      if (masked && masked(i, j)) { px[o] = MASKED[0]; px[o + 1] = MASKED[1]; px[o + 2] = MASKED[2]; px[o + 3] = 255; continue; }
      let v = data[src + j];
      if (log) v = v > 0 ? Math.log10(v) : NaN;
      if (transform) v = transform(v);
      if (!Number.isFinite(v)) { px[o + 3] = 0; continue; } // nothing there: the page shows
      const li = Math.max(0, Math.min(255, Math.round((v - lo) * scale))) * 4;
      px[o] = lut[li]; px[o + 1] = lut[li + 1]; px[o + 2] = lut[li + 2]; px[o + 3] = 255;
    }
  }
  sctx.putImageData(image, 0, 0);
  ctx.save();
  ctx.globalAlpha = alpha;
  ctx.imageSmoothingEnabled = smooth;
  ctx.drawImage(scratch, x, y, w, h);
  ctx.restore();
}
