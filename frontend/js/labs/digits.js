// View of `digits`: an MLP learning scikit-learn's 8×8 digits, on the training dashboard: loss
// and accuracy curves (a kept run's test accuracy dashed beside, so ablations compare on one
// chart) and the per-layer gradient waterfall; then the first layer's weights as 8×8
// templates, the confusion matrix, misclassified test images, one test image's activations,
// and a pad the learner draws on: the server reduces the drawing to 8×8 counts and answers
// with the softmax. No model math here.
import { addStrings } from '../core/i18n.js';
import { rows2d } from '../core/frame.js';
import { bars } from '../components/bars.js';
import { drawPad } from '../components/drawPad.js';
import { dashboard } from '../components/dashboard.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, Plotly, throttleFrame } from '../components/plot.js';
import { readout } from '../components/readout.js';
import { templateGrid } from '../components/templateGrid.js';
import { STRINGS } from './digits/strings.js';
import { add } from '../core/dom.js';


const ACT_ROW = 32; // an activation vector is drawn in rows of this many units

export const stylesheet = '/css/labs/digits.css'; // the shell loads it


/** A vector [n] as rows of ACT_ROW values, padded with NaN (drawn as background). */
function asRows(tensor) {
  const n = tensor.data.length;
  const w = Math.min(n, ACT_ROW), h = Math.ceil(n / w);
  const data = new Float32Array(w * h).fill(NaN);
  data.set(tensor.data);
  return { shape: [1, h, w], data };
}

/** Activation strips: one labelled canvas per layer, in the order the model computes them. */
function strips(parent) {
  const box = add(parent, 'div', 'strips');
  const rows = new Map();
  return {
    draw(tensors) {
      const names = Object.keys(tensors).filter((k) => k.startsWith('layers.')).sort();
      for (const name of [...names, 'hook_logits']) {
        const t = tensors[name];
        if (!t) continue;
        let row = rows.get(name);
        if (!row) {
          const line = add(box, 'div', 'strip');
          const label = add(line, 'span', '');
          label.textContent = name;
          const holder = add(line, 'div', '');
          row = { line, grid: templateGrid(holder, { cols: 1, scale: 8, gap: 1, lut: 'rdbu', describe: () => name }) };
          rows.set(name, row);
        }
        row.grid.draw(asRows(t));
      }
      for (const [name, row] of rows) if (!tensors[name]) { row.line.remove(); rows.delete(name); }
    },
  };
}

export default function mount(root, ctx) {
  const { t, store, setParams } = ctx;
  addStrings(STRINGS);
  root.innerHTML = '';

  // -- the dashboard: loss (log ticks at 1, 2, 5 of each decade, written out: 0.5, not a bare
  // 5), accuracy with the kept runs' test accuracy, the gradient waterfall ------------------
  const dash = dashboard(root, ctx, {
    className: 'digits-view',
    charts: [
      {
        title: 'digits.loss_chart', cls: 'digits-loss', logY: true, yaxis: { dtick: 'D2', tickformat: '~g' },
        keys: [{ key: 'loss', name: 'digits.train_loss' }, { key: 'test_loss', name: 'digits.test_loss', color: COLORS[1] }],
      },
      {
        title: 'digits.acc_chart', cls: 'digits-acc', hint: 'digits.ghost_hint', keptKey: 'test_acc', yaxis: { range: [0, 1.02], tickformat: '.0%' },
        keys: [{ key: 'train_acc', name: 'digits.train_acc' }, { key: 'test_acc', name: 'digits.test_acc', color: COLORS[1] }],
      },
    ],
    readout: false, // the lab's facts panel is its readout
  });
  const grid = dash.grid;

  // -- panels ---------------------------------------------------------------------------
  const pDraw = panel(grid, 'digits.draw', { chart: false, hint: 'digits.draw_hint' });
  const pTpl = panel(grid, 'digits.templates', { chart: false, wide: true, hint: 'digits.tpl_hint' });
  const pSample = panel(grid, 'digits.sample', { chart: false });
  const pConf = panel(grid, 'digits.confusion');
  const pMiss = panel(grid, 'digits.mistakes', { chart: false, hint: 'digits.mistakes_hint' });
  const pInfo = panel(grid, 'digits.info', { chart: false, now: true });
  pInfo.el.classList.add('full');
  // Stable hooks for tests and for anyone styling the view.
  pDraw.el.classList.add('digits-draw');
  pTpl.el.classList.add('digits-templates');
  pSample.el.classList.add('digits-sample');
  pConf.el.classList.add('digits-confusion');
  pMiss.el.classList.add('digits-mistakes');

  // The drawing pad, what the model sees of it, and its softmax.
  const drawRow = add(pDraw.body, 'div', 'row');
  const padCol = add(drawRow, 'div', 'col');
  let lastImage = null, lastInferAt = 0;
  const sendInfer = (image) => {
    if (store.get('role') !== 'driver') return; // viewers watch; only the driver may infer
    lastInferAt = performance.now();
    ctx.infer({ image, fit: fitBox.checked });
  };
  const pad = drawPad(padCol, {
    size: 256, grid: 32, lineWidth: 22, throttleMs: 100, ariaLabel: t('digits.draw'),
    onDraw: (image, { final }) => {
      lastImage = image;
      if (final && store.get('role') !== 'driver') ctx.toast(t('digits.viewer_draw'));
      sendInfer(image);
    },
  });
  const tools = add(padCol, 'div', 'tools');
  const clearBtn = add(tools, 'button', '');
  clearBtn.type = 'button';
  const fitLabel = add(tools, 'label', '');
  const fitBox = add(fitLabel, 'input', '');
  fitBox.type = 'checkbox';
  fitBox.checked = true;
  const fitText = add(fitLabel, 'span', '');
  fitBox.onchange = () => { if (lastImage) sendInfer(lastImage); };
  const seenCol = add(drawRow, 'div', 'col');
  const predEl = add(seenCol, 'div', 'pred');
  const bitmapCap = add(seenCol, 'div', 'caption');
  const bitmapGrid = templateGrid(seenCol, { cols: 1, scale: 3, gap: 1, lut: 'greys' });
  const seenCap = add(seenCol, 'div', 'caption');
  const seenGrid = templateGrid(seenCol, { cols: 1, scale: 12, gap: 1, lut: 'greys', describe: () => t('digits.seen') });
  const drawnCap = add(pDraw.body, 'div', 'caption');
  const drawnBarsEl = add(pDraw.body, 'div', 'chart small drawn-probs');
  const drawnBars = bars(drawnBarsEl, { range: [0, 1], color: COLORS[0] });
  const drawnStrips = strips(pDraw.body);
  const blank = { shape: [8, 8], data: new Float32Array(64) };
  const clearDrawing = () => {
    pad.clear();
    lastImage = null;
    bitmapGrid.draw({ shape: [32, 32], data: new Float32Array(1024) }, { range: [0, 1] });
    seenGrid.draw(blank, { range: [0, 16] });
    drawnBars.draw([...'0123456789'], new Array(10).fill(0));
    predEl.textContent = '–';
    add(predEl, 'small', '').textContent = t('digits.draw_first');
  };
  clearBtn.onclick = clearDrawing;

  // First-layer templates.
  const tplTools = add(pTpl.body, 'div', 'tools');
  const showLabel = add(tplTools, 'label', '');
  const showText = add(showLabel, 'span', '');
  const showSel = add(showLabel, 'select', '');
  for (const v of ['weights', 'change']) { const o = add(showSel, 'option', ''); o.value = v; }
  showSel.value = ctx.params().templates || 'weights';
  showSel.onchange = () => setParams({ templates: showSel.value });
  const perMapLabel = add(tplTools, 'label', '');
  const perMap = add(perMapLabel, 'input', '');
  perMap.type = 'checkbox';
  const perMapText = add(perMapLabel, 'span', '');
  const tpl = templateGrid(pTpl.body, { cols: 16, scale: 5, gap: 3, gapColor: '#ffffff', lut: 'rdbu', describe: (i) => t('digits.unit', { i }) });
  let lastTpl = null;
  perMap.onchange = () => { if (lastTpl) tpl.draw(lastTpl, { perMap: perMap.checked }); };

  // One test image through the layers.
  const sRow = add(pSample.body, 'div', 'row');
  const sCol = add(sRow, 'div', 'col');
  const sampleGrid = templateGrid(sCol, { cols: 1, scale: 12, gap: 1, lut: 'greys' });
  const sTools = add(sCol, 'div', 'tools');
  const prevBtn = add(sTools, 'button', '');
  const nextBtn = add(sTools, 'button', '');
  prevBtn.type = nextBtn.type = 'button';
  const sRight = add(sRow, 'div', 'col');
  const sampleLabel = add(sRight, 'div', 'sample-label');
  const sampleBarsEl = add(sRight, 'div', 'chart small');
  sRight.style.flex = '1';
  sRight.style.minWidth = '200px';
  const sampleBars = bars(sampleBarsEl, { range: [0, 1], color: COLORS[0] });
  const sampleStrips = strips(pSample.body);
  const moveSample = (d) => {
    if (store.get('role') !== 'driver' || !last) return;
    const n = last.meta.split.test;
    setParams({ sample: Math.min(899, (((last.meta.sample.index + d) % n) + n) % n) });
  };
  prevBtn.onclick = () => moveSample(-1);
  nextBtn.onclick = () => moveSample(1);

  // Confusion matrix.
  const confLayout = () => baseLayout({
    margin: { l: 52, r: 10, t: 10, b: 42 },
    xaxis: { title: { text: t('digits.predicted') }, dtick: 1, side: 'bottom' },
    yaxis: { title: { text: t('digits.true') }, dtick: 1, autorange: 'reversed' },
  });
  Plotly.newPlot(pConf.chart, [], confLayout(), CONFIG);
  const drawConf = throttleFrame((tensor) => {
    const z = rows2d(tensor);
    const digits = [...Array(10).keys()];
    Plotly.react(pConf.chart, [{
      type: 'heatmap', z, x: digits, y: digits, colorscale: [[0, '#ffffff'], [0.15, '#c6dbef'], [1, '#08306b']], showscale: false,
      texttemplate: '%{z}', hovertemplate: `${t('digits.true')} %{y} → ${t('digits.predicted')} %{x}: %{z}<extra></extra>`,
    }], confLayout(), CONFIG);
  });

  // Misclassified test images: click one to show it in the sample panel.
  let mistakes = [];
  const missNone = add(pMiss.body, 'p', 'caption');
  const missGrid = templateGrid(pMiss.body, {
    cols: 6, scale: 6, gap: 4, lut: 'greys', labelHeight: 14, gapColor: '#ffffff',
    describe: (i) => (mistakes[i] ? t('digits.sample_label', { i: mistakes[i].index, y: mistakes[i].label, p: mistakes[i].pred }) : ''),
    onPick: (i) => { if (mistakes[i] && store.get('role') === 'driver') setParams({ sample: mistakes[i].index }); },
  });

  const info = readout(pInfo.body);
  const notes = add(pInfo.body, 'div', 'notes');

  // -- drawing what arrives -------------------------------------------------------------
  let last = null;
  let lastConf = '';

  const probColours = (n, label, pred) => Array.from({ length: n }, (_, i) => (i === label ? COLORS[2] : i === pred ? COLORS[4] : COLORS[0]));

  function drawInfo(f) {
    const m = f.meta;
    if (!m.params) return;
    const sep = (v) => Number(v).toLocaleString('en-US');
    info.show([
      { label: t('digits.shape'), value: m.shape.join(' → ') },
      { label: t('digits.params'), value: t('digits.params_value', { total: sep(m.params.total), weights: sep(m.params.weights), biases: sep(m.params.total - m.params.weights) }) },
      { label: t('digits.split'), value: t('digits.split_value', { train: m.split.train, test: m.split.test }) },
      { label: t('digits.test_now'), value: `${(100 * m.now.test_acc).toFixed(1)}%`, note: t('digits.wrong_now', { n: m.n_wrong }) },
      { label: t('digits.book_params'), value: t('digits.book_value', { total: sep(m.book.total), weights: sep(m.book.weights), biases: sep(m.book.total - m.book.weights) }) },
    ]);
  }

  function drawNotes() {
    notes.replaceChildren(...['note_data', 'note_book', 'note_hand', 'note_batch'].map((k) => {
      const p = document.createElement('p');
      p.textContent = t(`digits.${k}`);
      return p;
    }));
  }

  function drawSample(f) {
    const m = f.meta.sample;
    const tn = f.tensors;
    if (tn.input) sampleGrid.draw(tn.input, { range: [0, 16] });
    if (tn.probs) sampleBars.draw([...'0123456789'], Array.from(tn.probs.data), probColours(10, m.label, m.pred));
    sampleLabel.textContent = t('digits.sample_label', { i: m.index, y: m.label, p: m.pred });
    sampleLabel.classList.toggle('wrong', m.label !== m.pred);
    sampleStrips.draw(tn);
  }

  function drawMistakes(f) {
    mistakes = f.meta.mistakes || [];
    missNone.textContent = mistakes.length ? '' : t('digits.none_wrong');
    missNone.hidden = !!mistakes.length;
    if (f.tensors.mistakes) missGrid.draw(f.tensors.mistakes, { range: [0, 16], labels: mistakes.map((x) => `${x.label}→${x.pred}`) });
  }

  function relabelStatic() {
    clearBtn.textContent = t('digits.clear');
    fitText.textContent = t('digits.fit');
    perMapText.textContent = t('digits.per_map');
    showText.textContent = t('digits.show');
    showSel.options[0].textContent = t('digits.show_weights');
    showSel.options[1].textContent = t('digits.show_change');
    bitmapCap.textContent = t('digits.bitmap');
    seenCap.textContent = t('digits.seen');
    drawnCap.textContent = t('digits.drawn_probs');
    prevBtn.textContent = t('digits.prev');
    nextBtn.textContent = t('digits.next');
    pad.el.setAttribute('aria-label', t('digits.draw'));
    drawNotes();
  }
  relabelStatic();
  clearDrawing();

  return {
    frame(f) {
      last = f;
      dash.onFrame(f);
      showSel.disabled = store.get('role') !== 'driver';
      const tn = f.tensors;
      if (tn.templates) { lastTpl = tn.templates; tpl.draw(tn.templates, { perMap: perMap.checked }); }
      if (tn.confusion) {
        const key = tn.confusion.data.join(','); // counts change rarely once trained: skip equal redraws
        if (key !== lastConf) { lastConf = key; drawConf(tn.confusion); }
      }
      if (f.meta.sample) drawSample(f);
      if (f.meta.mistakes) drawMistakes(f);
      drawInfo(f);
      // Keep the drawing's softmax current while the model learns (a few times a second).
      if (lastImage && !f.replay && store.get('role') === 'driver' && performance.now() - lastInferAt > 400) sendInfer(lastImage);
    },
    infer(f) {
      const tn = f.tensors;
      if (tn.bitmap) bitmapGrid.draw(tn.bitmap, { range: [0, 1] });
      if (tn.input) seenGrid.draw(tn.input, { range: [0, 16] });
      if (tn.probs) {
        const p = Array.from(tn.probs.data);
        drawnBars.draw([...'0123456789'], p, probColours(10, -1, f.meta.pred));
        predEl.textContent = f.meta.empty ? '–' : String(f.meta.pred);
        add(predEl, 'small', '').textContent = f.meta.empty ? t('digits.draw_first') : `p = ${fmt(p[f.meta.pred], 3)}`;
      }
      drawnStrips.draw(tn);
    },
    params(p) {
      showSel.value = p.templates;
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() {
      lastConf = '';
      dash.reset();
    },
    relabel() {
      for (const p of [pDraw, pTpl, pSample, pConf, pMiss, pInfo]) p.relabel();
      dash.relabel();
      if (last && last.tensors.confusion) drawConf(last.tensors.confusion); // titles and hover text
      relabelStatic();
      if (last) { drawInfo(last); if (last.meta.sample) drawSample(last); if (last.meta.mistakes) drawMistakes(last); }
      if (!lastImage) clearDrawing();
    },
  };
}
