// The head view, as BertViz draws it: the tokens twice, queries on the left and keys on the
// right, a line from each query to each key as opaque as the weight the head gives it. One
// head in its colour, or all heads of the layer at once, each in its own colour. With a
// token in focus (hovered or clicked) only its lines are drawn, and the keys' weights are
// printed beside them. The weights are the server's; nothing is recomputed here.
import { fitCanvas } from '../../components/mapGrid.js';

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#ad494a'];

export const headColor = (h) => PALETTE[h % PALETTE.length];

function rgba(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}

/**
 * canvas, wrap (its box: width read from it). opts: tokens, layer, head (-1 = all),
 * nHeads, weight(l, h, i, j), focus (a query index or null), color(h).
 */
export function drawHeadView(canvas, wrap, { tokens, layer, head, nHeads, weight, focus, color }) {
  const T = tokens.length;
  const rowH = T > 60 ? 13 : 18;
  const width = Math.max(260, Math.min(560, wrap.clientWidth || 420));
  const height = 8 + T * rowH;
  const ctx = fitCanvas(canvas, width, height);
  ctx.clearRect(0, 0, width, height);
  ctx.font = `${rowH > 14 ? 13 : 11}px ui-monospace, "Noto Sans Mono CJK SC", monospace`;
  ctx.textBaseline = 'middle';
  const textW = Math.min(130, 16 + Math.max(...tokens.map((s) => ctx.measureText(s).width)));
  const xL = textW, xR = width - textW;
  const y = (i) => 4 + (i + 0.5) * rowH;
  const heads = head < 0 ? Array.from({ length: nHeads }, (_, h) => h) : [head];
  const rows = focus === null || focus === undefined || focus >= T ? null : [focus];
  ctx.lineWidth = 2;
  for (const h of heads) {
    const col = color(h);
    for (const i of rows || tokens.keys()) {
      for (let j = 0; j < T; j++) {
        const w = weight(layer, h, i, j);
        if (w < 0.01) continue;
        ctx.strokeStyle = rgba(col, Math.min(1, (rows ? 1 : 0.8) * w * (heads.length > 1 ? 0.8 : 1)));
        ctx.beginPath();
        ctx.moveTo(xL + 4, y(i));
        ctx.lineTo(xR - 4, y(j));
        ctx.stroke();
      }
    }
  }
  const fg = getComputedStyle(wrap).color;
  for (let i = 0; i < T; i++) {
    const focused = rows && rows[0] === i;
    ctx.fillStyle = focused ? '#ff7800' : fg;
    ctx.textAlign = 'right';
    ctx.fillText(tokens[i], xL - 4, y(i));
    ctx.textAlign = 'left';
    ctx.fillStyle = fg;
    ctx.fillText(tokens[i], xR + 4, y(i));
    if (rows && heads.length === 1) { // the weight beside each key
      const w = weight(layer, heads[0], rows[0], i);
      ctx.fillStyle = rgba(color(heads[0]), Math.max(0.15, w));
      ctx.fillRect(width - 6, 4 + i * rowH + 2, 5, rowH - 4);
    }
  }
  canvas.dataset.layer = String(layer);
  canvas.dataset.head = String(head);
  canvas.dataset.focus = rows ? String(rows[0]) : '';
  return { rowH, top: 4, rows: T };
}
