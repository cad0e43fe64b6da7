// Small heatmaps at positions a caller lays out (the network diagram puts one on every
// node), painted by mapGrid's painter (one putImageData a map). Maps arrive as decoded
// tensors [K, G, G] whose row 0 is the *bottom* of the plane (x2 = −extent), so rows flip.
import { fitCanvas, LUTS, paintMap } from './mapGrid.js';

export { makeLut, PLAYGROUND_STOPS } from './mapGrid.js';
export const DIVERGING = LUTS.diverging;

/** [lo, hi] symmetric around 0 covering the tensor (for a diverging LUT). */
const symmetric = (tensor) => {
  const m = Math.max(Math.abs(tensor.min ?? 0), Math.abs(tensor.max ?? 0)) || 1;
  return [-m, m];
};

/**
 * A canvas of small maps: drawAt(items, w, h) paints them where they are given.
 * items: [{tensor, k, x, y, size, lut?, range?, alpha?}] or {x, y, size, fill} for an empty box.
 */
export function neuronMaps(el, { className = 'neuron-maps' } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = className;
  el.append(canvas);
  const ctx = canvas.getContext('2d');

  function resize(w, h) {
    fitCanvas(canvas, w, h); // at the device pixel ratio
    ctx.clearRect(0, 0, w, h);
  }

  function drawAt(items, w, h) {
    resize(w, h);
    for (const it of items) {
      if (it.tensor) {
        const [rows, cols] = it.tensor.shape.slice(-2);
        paintMap(ctx, it.tensor.data, it.k * rows * cols, rows, cols, it.x, it.y, it.size, it.size, {
          lut: it.lut || DIVERGING, range: it.range || symmetric(it.tensor), alpha: it.alpha ?? 1, flipRows: true, smooth: true,
        });
      } else {
        ctx.fillStyle = it.fill || '#eee';
        ctx.fillRect(it.x, it.y, it.size, it.size);
      }
    }
  }

  return { el: canvas, ctx, drawAt, resize };
}
