// The gradient waterfall: one row per stage (embed, blocks.0, …, unembed), one column per
// step (binned to the canvas width), coloured by log10 of the gradient norm, on ONE canvas
// (mapGrid's painter: one putImageData). Several arms stack their stages in bands. Reads the
// scalars `grad_norm.<stage>` (one arm) or `arm.<i>.grad_norm.<stage>` (several). Hover a
// cell: stage, step and value.
import { ensureCss } from '../core/css.js';
import { addStrings, t } from '../core/i18n.js';
import { fitCanvas, LUTS, paintMap, part } from './mapGrid.js';
import { finite, fmt } from './plot.js';

addStrings({
  en: { 'wf.step': 'step', 'wf.empty': 'Gradient norms per stage appear here once the model trains.', 'wf.aria': 'Gradient norm of {n} stages over {steps} steps, log colour scale', 'wf.scale': 'log₁₀ ‖g‖' },
  zh: { 'wf.step': '步', 'wf.empty': '开始训练后，这里显示每个阶段的梯度范数。', 'wf.aria': '{n} 个阶段在 {steps} 步上的梯度范数（对数色标）', 'wf.scale': 'log₁₀ ‖g‖' },
});

const NAME = /^(?:arm\.(\d+)\.)?grad_norm\.(.+)$/;
const ROW_H = 22;
const MAX_ROWS_PX = 360;

/** el: a container. Returns {add(rows), clear(), setArms(arms), redraw()}. */
export function waterfall(el, { lut = LUTS.viridis } = {}) {
  ensureCss('/css/map-grid.css');
  el.classList.add('waterfall');
  const canvas = part('canvas', 'wf-canvas', { role: 'img' });
  const tip = part('div', 'mg-tip wf-tip', { hidden: true });
  const empty = part('p', 'hint wf-empty');
  el.append(canvas, tip, empty);

  let steps = []; // every step seen, in order
  let series = new Map(); // scalar name -> {arm, stage, values: number[] aligned with steps}
  let arms = [];
  let layout = null;
  let dirty = false;

  const rowsOrder = () => [...series.values()].sort((a, b) => a.arm - b.arm || a.order - b.order);

  function add(rows) {
    for (const { step, values } of rows) {
      if (steps.length && step <= steps[steps.length - 1]) continue; // a replayed row
      steps.push(step);
      for (const [name, v] of Object.entries(values)) {
        const m = NAME.exec(name);
        if (!m) continue;
        let s = series.get(name);
        if (!s) {
          s = { arm: m[1] === undefined ? 0 : Number(m[1]), stage: m[2], order: series.size, values: [] };
          series.set(name, s);
        }
        s.values[steps.length - 1] = v;
      }
    }
    if (!dirty) { dirty = true; requestAnimationFrame(draw); }
  }

  function draw() {
    dirty = false;
    const list = rowsOrder();
    empty.hidden = list.length > 0;
    empty.textContent = t('wf.empty');
    if (!list.length) { canvas.hidden = true; layout = null; return; }
    canvas.hidden = false;
    const many = 1 + Math.max(...list.map((s) => s.arm)) > 1;
    const ctx0 = canvas.getContext('2d');
    ctx0.font = '11px system-ui, "Noto Sans CJK SC", sans-serif';
    const rowLabel = (s) => (many ? `${arms[s.arm]?.label ?? `#${s.arm}`} · ${s.stage}` : s.stage);
    const labelW = 8 + Math.max(...list.map((s) => ctx0.measureText(rowLabel(s)).width));
    const width = Math.max(240, el.clientWidth || 500);
    const plotW = Math.max(40, width - labelW - 8);
    const n = steps.length;
    const bins = Math.max(1, Math.min(n, Math.floor(plotW)));
    const rowH = Math.max(5, Math.min(ROW_H, Math.floor(MAX_ROWS_PX / list.length)));
    const R = list.length;
    // bin b holds the last finite value of its steps: the value at the step hover names
    const data = new Float32Array(R * bins).fill(NaN);
    const binStep = new Array(bins);
    let lo = Infinity, hi = -Infinity;
    for (let b = 0; b < bins; b++) {
      const a = Math.floor((b * n) / bins), z = Math.max(a + 1, Math.floor(((b + 1) * n) / bins));
      binStep[b] = [a, z - 1];
      list.forEach((s, r) => {
        for (let i = z - 1; i >= a; i--) {
          const v = s.values[i];
          if (finite(v) && v >= 0) { data[r * bins + b] = v; break; }
        }
      });
    }
    for (const v of data) if (v > 0) { const l = Math.log10(v); if (l < lo) lo = l; if (l > hi) hi = l; }
    if (!Number.isFinite(lo)) { lo = -1; hi = 0; }
    if (hi <= lo) hi = lo + 1;
    // A vanished gradient (0: below float range) is drawn at the scale's low end, as the
    // smallest norm, never blank (blank reads "no data").
    let vanished = false;
    for (let i = 0; i < data.length; i++) if (data[i] === 0) { data[i] = 10 ** lo; vanished = true; }
    const axisH = 36; // the step axis, then the colour scale under it
    const cssW = labelW + plotW + 8, cssH = R * rowH + axisH;
    const ctx = fitCanvas(canvas, cssW, cssH);
    ctx.clearRect(0, 0, cssW, cssH);
    paintMap(ctx, data, 0, R, bins, labelW, 0, plotW, R * rowH, { lut, range: [lo, hi], log: true });
    const color = getComputedStyle(el).color;
    ctx.fillStyle = color;
    // Rows too thin for a readable label (a deep stack, several arms: ~90 rows) are labelled
    // every k-th row of each arm's band, from its first, in a 9 px font at least.
    const every = Math.max(1, Math.ceil(10 / rowH));
    const labelPx = Math.max(9, Math.min(11, rowH));
    ctx.font = `${labelPx}px system-ui, "Noto Sans CJK SC", sans-serif`;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'right';
    let labelled = 0;
    list.forEach((s, r) => {
      const first = list.findIndex((o) => o.arm === s.arm);
      if ((r - first) % every) return;
      labelled++;
      ctx.fillText(rowLabel(s), labelW - 4, every > 1 ? r * rowH + labelPx / 2 + 1 : r * rowH + rowH / 2);
    });
    if (many) { // a line between the arms' bands, across the plot
      ctx.fillStyle = color;
      list.forEach((s, r) => { if (r && list[r - 1].arm !== s.arm) ctx.fillRect(labelW, r * rowH - 0.5, plotW, 1); });
    }
    Object.assign(canvas.dataset, { rows: R, rowH, labelW, labelPx, labelled, vanished: vanished ? '1' : '' });
    ctx.font = '11px system-ui, "Noto Sans CJK SC", sans-serif';
    ctx.textBaseline = 'top';
    ctx.textAlign = 'left';
    ctx.fillText(`${t('wf.step')} ${steps[0]}`, labelW, R * rowH + 3);
    ctx.textAlign = 'right';
    ctx.fillText(String(steps[n - 1]), labelW + plotW, R * rowH + 3);
    // the colour scale: a bar with its two ends in gradient-norm units
    const barW = Math.min(120, plotW / 3), by = R * rowH + 22;
    ctx.font = '10px system-ui, "Noto Sans CJK SC", sans-serif';
    const loText = `${vanished ? '≤ ' : ''}${fmt(10 ** lo, 2)}`, bx = labelW + 4 + ctx.measureText(loText).width;
    const ramp = new Float32Array(64).map((_, i) => i / 63);
    paintMap(ctx, ramp, 0, 1, 64, bx, by, barW, 8, { lut, range: [0, 1], smooth: true });
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(loText, bx - 4, by + 4);
    ctx.textAlign = 'left';
    ctx.fillText(`${fmt(10 ** hi, 2)}  ${t('wf.scale')}`, bx + barW + 4, by + 4);
    layout = { labelW, plotW, rowH, R, bins, binStep, list, data, many, rowLabel };
    const aria = t('wf.aria', { n: R, steps: n });
    if (canvas.getAttribute('aria-label') !== aria) canvas.setAttribute('aria-label', aria);
  }

  canvas.addEventListener('mousemove', (ev) => {
    if (!layout) return;
    const b = canvas.getBoundingClientRect();
    const x = ev.clientX - b.left - layout.labelW, y = ev.clientY - b.top;
    const col = Math.floor((x / layout.plotW) * layout.bins), r = Math.floor(y / layout.rowH);
    if (x < 0 || col >= layout.bins || r < 0 || r >= layout.R) { tip.hidden = true; return; }
    const s = layout.list[r];
    const [a, z] = layout.binStep[col];
    let i = z;
    while (i > a && !finite(s.values[i])) i--;
    const v = s.values[i];
    tip.textContent = `${layout.rowLabel(s)} · ${t('wf.step')} ${steps[i]} · ‖g‖ = ${fmt(v, 3)}`;
    tip.hidden = false;
    const box = el.getBoundingClientRect();
    tip.style.left = `${Math.min(ev.clientX - box.left + 14, box.width - 240)}px`;
    tip.style.top = `${ev.clientY - box.top + 14}px`;
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  new ResizeObserver(() => { if (steps.length) draw(); }).observe(el);
  draw();

  return {
    el, canvas, tip,
    add,
    clear() { steps = []; series = new Map(); draw(); },
    setArms(a) { arms = a || []; if (steps.length) draw(); },
    redraw: draw,
  };
}
