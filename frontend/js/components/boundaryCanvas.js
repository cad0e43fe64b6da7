// A decision region on a canvas (fast enough to redraw 30 times a second): the class
// probabilities the server computed over a grid, the training and test points over them,
// and clicks turned into plane coordinates. Two classes: playground's orange–blue scale on
// P(class 1). More classes: each pixel takes its most likely class's colour, paler where the
// model is less sure. Probabilities arrive as a tensor [K, G, G] whose row 0 is the bottom.
import { fitCanvas, makeLut, paintMap } from './mapGrid.js';

export const CLASS_COLORS = ['#f59322', '#0877bd', '#2ca25f', '#8e44ad', '#d62728'];
const PAPER = '#f7f7f5';
export const TWO = makeLut([CLASS_COLORS[0], PAPER, CLASS_COLORS[1]]);
export const CLASS_LUTS = CLASS_COLORS.map((c) => makeLut([PAPER, c])); // paper -> the class colour
const PAD = { l: 30, r: 8, t: 8, b: 24 };
const sure = (v) => (v >= 0.5 ? 0.8 : 0.2); // "discretize": two flat colours

/** el: a container; onClick(x1, x2, event) gets plane coordinates of a click inside the plot. */
export function boundaryCanvas(el, { onClick = null } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = 'boundary-canvas';
  el.append(canvas);
  const ctx = canvas.getContext('2d');
  let box = null; // {x, y, size, extent}: where the plane is on the canvas
  let winners = []; // per class: how much of its colour shows where it is the likeliest, else NaN

  // Painted by mapGrid's painter (row 0 of the tensor is the bottom: flipRows).
  function region(p, K, discretize) {
    const [, rows, cols] = p.shape;
    const n = rows * cols, d = p.data;
    const at = { lut: TWO, range: [0, 1], flipRows: true, smooth: !discretize };
    if (K === 2) { // P(class 1) on playground's orange–blue scale
      paintMap(ctx, d, n, rows, cols, box.x, box.y, box.size, box.size, { ...at, transform: discretize ? sure : null });
      return;
    }
    if (winners.length !== K || winners[0].length !== n) winners = Array.from({ length: K }, () => new Float32Array(n));
    for (let s = 0; s < n; s++) {
      let best = 0;
      for (let k = 1; k < K; k++) if (d[k * n + s] > d[best * n + s]) best = k;
      // Confidence above chance, 0..1, mapped to how much of the class colour shows.
      const conf = discretize ? 1 : Math.max(0, (d[best * n + s] - 1 / K) / (1 - 1 / K));
      for (let k = 0; k < K; k++) winners[k][s] = k === best ? 0.15 + 0.55 * conf : NaN;
    }
    ctx.fillStyle = PAPER; // under the classes' maps: their edges blend into paper
    ctx.fillRect(box.x, box.y, box.size, box.size);
    winners.forEach((w, k) => paintMap(ctx, w, 0, rows, cols, box.x, box.y, box.size, box.size, { ...at, lut: CLASS_LUTS[k % CLASS_LUTS.length] }));
  }

  function dots(points, extent, { stroke, radius, from = 0, to = null }) {
    if (!points) return;
    const [n] = points.shape;
    const d = points.data;
    const sx = box.size / (2 * extent);
    for (let i = from; i < (to ?? n); i++) {
      const x = box.x + (d[i * 3] + extent) * sx, y = box.y + (extent - d[i * 3 + 1]) * sx;
      ctx.beginPath();
      ctx.arc(x, y, radius, 0, 2 * Math.PI);
      ctx.fillStyle = CLASS_COLORS[d[i * 3 + 2] % CLASS_COLORS.length];
      ctx.fill();
      ctx.lineWidth = radius > 4 ? 2 : 1;
      ctx.strokeStyle = stroke;
      ctx.stroke();
    }
  }

  function axes(extent, colour) {
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.lineWidth = 1;
    ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.size - 1, box.size - 1);
    ctx.font = '11px system-ui, sans-serif';
    const sx = box.size / (2 * extent);
    for (let v = -extent; v <= extent + 1e-9; v += extent / 3) {
      const x = box.x + (v + extent) * sx, y = box.y + (extent - v) * sx;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      ctx.fillText(String(Math.round(v)), x, box.y + box.size + 4);
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      ctx.fillText(String(Math.round(v)), box.x - 4, y);
    }
  }

  canvas.addEventListener('click', (ev) => {
    if (!onClick || !box) return;
    const r = canvas.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const e = box.extent;
    const x1 = -e + ((px - box.x) / box.size) * 2 * e, x2 = e - ((py - box.y) / box.size) * 2 * e;
    if (Math.abs(x1) <= e && Math.abs(x2) <= e) onClick(x1, x2, ev);
  });

  return {
    el: canvas,
    /**
     * f: {probs [K, G, G], train [N, 3], test [M, 3], extent, classes, showTest, discretize,
     *     mine: how many of the last training points are the learner's}
     */
    draw(f) {
      const side = Math.max(200, Math.min(el.clientWidth || 320, 420));
      fitCanvas(canvas, side, side);
      ctx.clearRect(0, 0, side, side);
      const size = side - Math.max(PAD.l + PAD.r, PAD.t + PAD.b);
      box = { x: PAD.l, y: PAD.t, size, extent: f.extent };
      if (f.probs) region(f.probs, f.classes, f.discretize);
      const n = f.train ? f.train.shape[0] : 0;
      ctx.save();
      ctx.beginPath();
      ctx.rect(box.x - 6, box.y - 6, size + 12, size + 12); // a point far outside is not drawn
      ctx.clip();
      if (f.showTest) dots(f.test, f.extent, { stroke: '#222', radius: 3 });
      dots(f.train, f.extent, { stroke: '#fff', radius: 3, to: n - (f.mine || 0) });
      dots(f.train, f.extent, { stroke: '#111', radius: 6, from: n - (f.mine || 0) });
      ctx.restore();
      axes(f.extent, getComputedStyle(el).color);
    },
  };
}
