// The `conv` view's number grids: cells tinted by sign and size, painted by dragging, and the
// keys of a sliding window's cells (geometry only: every number comes from the server).
import { fmt } from '../../components/plot.js';
import { add } from '../../core/dom.js';

/** A number as a cell shows it: 3 decimals at most, a true minus sign. */
export const num = (v) => { const s = Math.abs(v) >= 100 ? fmt(v, 3) : (Math.round(v * 1000) / 1000).toString(); return s === '-0' ? '0' : s.replace('-', '−'); };
const tint = (v, big) => {
  const a = big > 0 ? Math.min(1, Math.abs(v) / big) : 0;
  const c = v < 0 ? [47, 111, 223] : [232, 112, 42];
  return `rgb(${c.map((x) => Math.round(255 + (x - 255) * a * 0.75)).join(',')})`;
};

/** A grid of numbered cells (CSS grid of divs). opts.paint(i, j) while dragging, opts.hover(i, j | null). */
export function cells(parent, { cls = '', paint = null, hover = null } = {}) {
  const box = add(parent, 'div', `conv-cells ${cls}`);
  let rows = [];
  let painting = false;
  const at = (ev) => { const c = ev.target.closest('[data-i]'); return c ? [Number(c.dataset.i), Number(c.dataset.j)] : null; };
  if (paint) {
    box.style.touchAction = 'none';
    box.addEventListener('pointerdown', (ev) => { const p = at(ev); if (!p) return; ev.preventDefault(); painting = true; box.setPointerCapture(ev.pointerId); paint(p[0], p[1], 'start'); });
    box.addEventListener('pointermove', (ev) => {
      if (!painting) return;
      const c = document.elementFromPoint(ev.clientX, ev.clientY)?.closest('[data-i]');
      if (c && box.contains(c)) paint(Number(c.dataset.i), Number(c.dataset.j), 'move');
    });
    const end = () => { if (painting) { painting = false; paint(-1, -1, 'end'); } };
    box.addEventListener('pointerup', end);
    box.addEventListener('pointercancel', end);
  }
  if (hover) {
    box.addEventListener('pointerover', (ev) => { const p = at(ev); if (p) hover(p[0], p[1]); });
    box.addEventListener('pointerleave', () => hover(null));
  }
  return {
    el: box,
    get rows() { return rows; },
    /** data: rows of numbers; opts: {mark: Set('i,j'), win: Set('i,j'), pad: border cells shown as padding, big} */
    draw(data, { mark = null, win = null, pad = 0, big = null } = {}) {
      rows = data;
      const r = rows.length, c = r ? rows[0].length : 0;
      const m = big ?? Math.max(0, ...rows.flat().map((v) => Math.abs(v)));
      box.style.gridTemplateColumns = `repeat(${c + 2 * pad}, var(--cell))`;
      const out = [];
      for (let i = -pad; i < r + pad; i++) {
        for (let j = -pad; j < c + pad; j++) {
          const d = document.createElement('div');
          const inside = i >= 0 && j >= 0 && i < r && j < c;
          const key = `${i},${j}`;
          if (inside) {
            const v = rows[i][j];
            d.textContent = num(v);
            d.style.background = tint(v, m);
            d.dataset.i = String(i);
            d.dataset.j = String(j);
          } else {
            d.className = 'pad';
            d.textContent = '0';
          }
          if (win && win.has(key)) d.classList.add('win');
          if (mark && mark.has(key)) d.classList.add('mark');
          out.push(d);
        }
      }
      box.replaceChildren(...out);
    },
  };
}

/** Set of 'i,j' keys of a k×k window at (top, left) in unpadded coordinates. */
export const windowKeys = (top, left, kr, kc) => { const s = new Set(); for (let a = 0; a < kr; a++) for (let b = 0; b < kc; b++) s.add(`${top + a},${left + b}`); return s; };
