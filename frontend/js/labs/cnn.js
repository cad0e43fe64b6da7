// View of `cnn`: the dashboard (loss, train and test accuracy and their gap by arm, the
// gradient waterfall, a readout with both arms' parameter counts) plus the lab's pictures:
// a pad to draw a digit (both arms' softmax, the CNN's feature maps of the drawing), one test
// image through the CNN's conv layers, the learned kernels, each arm's confusion matrix on
// the whole test split and the MLP's first-layer templates. No model math here.
import { addStrings } from '../core/i18n.js';
import { dashboard } from '../components/dashboard.js';
import { drawPad } from '../components/drawPad.js';
import { mapGrid } from '../components/mapGrid.js';
import { matrixView } from '../components/matrixView.js';
import { panel } from '../components/panel.js';
import { probBars } from '../components/probBars.js';
import { add } from '../core/dom.js';

export const stylesheet = '/css/labs/cnn.css';

addStrings({
  en: {
    'cnn.acc': 'Accuracy: test (solid) and train (dotted), whole splits', 'cnn.test_acc': 'test', 'cnn.train_acc': 'train',
    'cnn.gap_chart': 'Train − test accuracy (the gap)', 'cnn.gap': 'gap', 'cnn.test_loss': 'test loss',
    'cnn.draw': 'Draw a digit', 'cnn.draw_hint': 'Draw with the mouse or a finger: both networks read it after every stroke, and the CNN shows what each channel sees.',
    'cnn.clear': 'Clear', 'cnn.draw_first': 'draw a digit', 'cnn.seen': 'What the networks see (8×8 counts)',
    'cnn.sample': 'One test image through the CNN', 'cnn.prev': '← Previous', 'cnn.next': 'Next →',
    'cnn.sample_label': 'test image #{i}: label {y}', 'cnn.says': '{arm} says {p}',
    'cnn.maps': 'Feature maps after conv {i} + ReLU ({c} channels, {s}×{s})', 'cnn.kernels': 'Learned kernels',
    'cnn.kernels_hint': 'Conv 1: one 3×3 kernel per channel. Conv 2: a row per output channel, one 3×3 kernel per input channel. Blue positive, orange negative.',
    'cnn.k_row': 'out {c}', 'cnn.k_title': 'conv {i} · out {o} · in {c}', 'cnn.ch': 'ch {c}',
    'cnn.confusion': 'Confusion on the whole test split: {arm}', 'cnn.true': 'true', 'cnn.pred': 'predicted',
    'cnn.templates': 'MLP first layer as 8×8 templates ({h} units)',
    'cnn.params': '{arm} parameters', 'cnn.params_note': 'counted from the model', 'cnn.now_acc': '{arm} train / test', 'cnn.now_gap': '{arm} gap',
    'cnn.gap_note': 'The text’s ResNet-18 on CIFAR-10 reached train 95.05% vs test 83.11%: the same overfitting story, at small scale here. Augmentation narrows the gap.',
    'cnn.split': 'split', 'cnn.split_value': '{train} train / {test} test (stratified)', 'cnn.wrong': '{n} wrong',
  },
  zh: {
    'cnn.acc': '准确率：测试（实线）与训练（点线），整个数据集', 'cnn.test_acc': '测试', 'cnn.train_acc': '训练',
    'cnn.gap_chart': '训练 − 测试准确率（差距）', 'cnn.gap': '差距', 'cnn.test_loss': '测试损失',
    'cnn.draw': '写一个数字', 'cnn.draw_hint': '用鼠标或手指写：每一笔之后两个网络都会读一遍，CNN 还会给出每个通道看到了什么。',
    'cnn.clear': '清空', 'cnn.draw_first': '先写一个数字', 'cnn.seen': '网络看到的（8×8 计数）',
    'cnn.sample': '一张测试图穿过 CNN', 'cnn.prev': '← 上一张', 'cnn.next': '下一张 →',
    'cnn.sample_label': '测试图 #{i}：标签 {y}', 'cnn.says': '{arm} 认为是 {p}',
    'cnn.maps': '第 {i} 层卷积 + ReLU 后的特征图（{c} 个通道，{s}×{s}）', 'cnn.kernels': '学到的卷积核',
    'cnn.kernels_hint': '第 1 层：每个通道一个 3×3 卷积核。第 2 层：每个输出通道一行，每个输入通道一个 3×3 卷积核。蓝色为正，橙色为负。',
    'cnn.k_row': '输出 {c}', 'cnn.k_title': '卷积 {i} · 输出 {o} · 输入 {c}', 'cnn.ch': '通道 {c}',
    'cnn.confusion': '整个测试集上的混淆矩阵：{arm}', 'cnn.true': '真实', 'cnn.pred': '预测',
    'cnn.templates': 'MLP 第一层的 8×8 模板（{h} 个单元）',
    'cnn.params': '{arm} 参数量', 'cnn.params_note': '从模型数出来的', 'cnn.now_acc': '{arm} 训练 / 测试', 'cnn.now_gap': '{arm} 差距',
    'cnn.gap_note': '原文的 ResNet-18 在 CIFAR-10 上训练集 95.05%、测试集 83.11%：同一个过拟合的故事，这里是小规模版。数据增强能缩小差距。',
    'cnn.split': '划分', 'cnn.split_value': '训练 {train} / 测试 {test}（分层抽样）', 'cnn.wrong': '错 {n} 张',
  },
});

const DIGITS = [...'0123456789'];
const pct = (v) => `${(100 * v).toFixed(1)}%`;

export default function mount(root, ctx) {
  const { t, store, setParams } = ctx;
  root.innerHTML = '';
  const view = add(root, 'div', 'cnn-view');
  let last = null; // the last training frame
  let latest = {}; // each scalar's last value (accuracy is measured every eval_every steps)
  const many = () => !!(last && last.meta.arms && last.meta.arms.length > 1);
  const prefix = (i) => (many() ? `arm.${i}.` : '');
  const armMeta = (f, i) => (f.meta.arms && f.meta.arms.length > 1 ? f.meta.arms[i] : f.meta);
  const armName = (i) => { const a = last?.meta.arms?.[i]; return a ? (a.title ? ctx.pick(a.title) : a.label) : ''; };

  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'dash.loss', keys: [{ key: 'loss', name: 'dash.train_loss' }, { key: 'test_loss', name: 'cnn.test_loss', markers: true }], logY: true },
      { title: 'cnn.acc', keys: [{ key: 'test_acc', name: 'cnn.test_acc' }, { key: 'train_acc', name: 'cnn.train_acc', dash: 'dot' }], legend: 'low' },
      { title: 'cnn.gap_chart', keys: [{ key: 'gap', name: 'cnn.gap' }], kept: false },
    ],
    readout: (f, arms) => {
      const rows = [];
      arms.forEach((a, i) => {
        const m = armMeta(f, i);
        const k = (name) => latest[many() ? `arm.${i}.${name}` : name]; // the last measured
        if (m.params !== undefined) rows.push({ label: t('cnn.params', { arm: a.label }), value: m.params.toLocaleString('en-US'), note: t('cnn.params_note') });
        if (k('test_acc') !== undefined) {
          rows.push({ label: t('cnn.now_acc', { arm: a.label }), value: `${pct(k('train_acc'))} / ${pct(k('test_acc'))}`, note: m.n_wrong !== undefined ? t('cnn.wrong', { n: m.n_wrong }) : '' });
          rows.push({ label: t('cnn.now_gap', { arm: a.label }), value: `${(100 * k('gap')).toFixed(1)} pt`, warn: k('gap') > 0.03 });
        }
      });
      if (f.meta.split) rows.push({ label: t('cnn.split'), value: t('cnn.split_value', f.meta.split) });
      return rows;
    },
  });
  dash.panels[1].el.classList.add('cnn-acc');
  dash.panels[2].el.classList.add('cnn-gap');
  const note = add(dash.panels[2].el, 'p', 'hint cnn-gap-note');
  const pics = dash.picturesEl;
  dash.el.append(pics); // the curves first: a projector shows accuracy and its gap on top

  // -- draw a digit -------------------------------------------------------------------------
  const pDraw = panel(pics, 'cnn.draw', { chart: false, hint: 'cnn.draw_hint' });
  pDraw.el.classList.add('cnn-draw');
  const drawRow = add(pDraw.body, 'div', 'cnn-row');
  const padCol = add(drawRow, 'div', 'cnn-col');
  let lastImage = null, lastInferAt = 0;
  const sendInfer = (image) => { if (store.get('role') !== 'driver') return; lastInferAt = performance.now(); ctx.infer({ image, fit: true }); };
  const pad = drawPad(padCol, { size: 224, grid: 32, lineWidth: 20, throttleMs: 120, ariaLabel: t('cnn.draw'), onDraw: (image) => { lastImage = image; sendInfer(image); } });
  const clearBtn = add(padCol, 'button', '');
  clearBtn.type = 'button';
  const seenCol = add(drawRow, 'div', 'cnn-col');
  const seenCap = add(seenCol, 'div', 'cnn-cap');
  const seen = mapGrid(add(seenCol, 'div', 'cnn-seen'), { colormap: 'greys', range: [0, 16], maxCell: 120 });
  const drawProbs = add(drawRow, 'div', 'cnn-probs');
  const drawMaps = add(pDraw.body, 'div', 'cnn-maps');
  const drawnBars = [];
  const drawnGrids = [];

  // -- one test image -------------------------------------------------------------------------
  const pSample = panel(pics, 'cnn.sample', { chart: false });
  pSample.el.classList.add('cnn-sample');
  const sRow = add(pSample.body, 'div', 'cnn-row');
  const sCol = add(sRow, 'div', 'cnn-col');
  const sampleGrid = mapGrid(add(sCol, 'div', 'cnn-seen'), { colormap: 'greys', range: [0, 16], maxCell: 120 });
  const sTools = add(sCol, 'div', 'cnn-tools');
  const prevBtn = add(sTools, 'button', '');
  const nextBtn = add(sTools, 'button', '');
  prevBtn.type = nextBtn.type = 'button';
  const sampleLabel = add(sCol, 'div', 'cnn-label');
  const sampleProbs = add(sRow, 'div', 'cnn-probs');
  const sampleMaps = add(pSample.body, 'div', 'cnn-maps');
  const sampleBars = [];
  const sampleGrids = [];
  const move = (d) => {
    if (store.get('role') !== 'driver' || !last) return;
    const n = last.meta.split.test;
    setParams({ sample: Math.min(899, (((last.meta.sample.index + d) % n) + n) % n) });
  };
  prevBtn.onclick = () => move(-1);
  nextBtn.onclick = () => move(1);

  // -- kernels, confusion, templates ----------------------------------------------------------
  const pKern = panel(pics, 'cnn.kernels', { chart: false, hint: 'cnn.kernels_hint' });
  pKern.el.classList.add('cnn-kernels');
  const kernBox = add(pKern.body, 'div', 'cnn-kern');
  const kernGrids = [];
  const pConf = panel(pics, null, { chart: false });
  pConf.el.classList.add('cnn-confusion');
  const confViews = [];
  const pTpl = panel(pics, null, { chart: false });
  pTpl.el.classList.add('cnn-templates');
  const tplCap = add(pTpl.body, 'h3', '');
  const tplGrid = mapGrid(add(pTpl.body, 'div', ''), { colormap: 'diverging', range: 'symmetric', columns: 10, maxCell: 48, minCell: 22 });

  /** Softmax bars per arm into `box` (reusing `list`), names from the arms. */
  function showProbs(box, list, tensors, label = null) {
    const n = many() ? last.meta.arms.length : 1;
    while (list.length < n) { const col = add(box, 'div', 'cnn-col'); const cap = add(col, 'div', 'cnn-cap'); list.push({ col, cap, bars: probBars(add(col, 'div', ''), { max: 10 }) }); }
    list.forEach((b, i) => {
      const probs = tensors[`${prefix(i)}probs`];
      b.col.hidden = i >= n || !probs;
      if (b.col.hidden) return;
      const p = Array.from(probs.data);
      const best = p.indexOf(Math.max(...p));
      b.cap.textContent = t('cnn.says', { arm: armName(i), p: best });
      b.bars.show(DIGITS.map((d, k) => ({ label: d, value: p[k], hot: k === best, kind: label === k ? 'tok' : '' })));
    });
  }

  /** The CNN's feature maps (arm 0) into `box`: one map grid per conv layer. */
  function showMaps(box, grids, tensors) {
    const names = Object.keys(tensors).filter((k) => k.startsWith(`${prefix(0)}convs.`) && k.endsWith('.hook_post')).sort();
    while (grids.length < names.length) { const cap = add(box, 'div', 'cnn-cap'); grids.push({ cap, g: mapGrid(add(box, 'div', 'cnn-map'), { colormap: 'viridis', range: 'auto', columns: 8, maxCell: 64, minCell: 26 }) }); }
    grids.forEach((x, i) => {
      const tn = tensors[names[i]];
      x.cap.hidden = x.g.canvas.hidden = !tn;
      if (!tn) return;
      const [c, s] = tn.shape;
      x.cap.textContent = t('cnn.maps', { i: i + 1, c, s });
      x.g.draw(tn, { mapLabels: Array.from({ length: c }, (_, k) => t('cnn.ch', { c: k })), title: (_, m) => `conv ${i + 1} · ${t('cnn.ch', { c: m })}` });
    });
  }

  function showKernels(tensors) {
    const names = Object.keys(tensors).filter((k) => k.startsWith(`${prefix(0)}convs.`) && k.endsWith('.kernels')).sort();
    while (kernGrids.length < names.length) { const cap = add(kernBox, 'div', 'cnn-cap'); kernGrids.push({ cap, g: mapGrid(add(kernBox, 'div', 'cnn-map'), { colormap: 'diverging', range: 'symmetric', maxCell: 30, minCell: 16, columns: 8 }) }); }
    kernGrids.forEach((x, i) => {
      const tn = tensors[names[i]];
      x.cap.hidden = x.g.canvas.hidden = !tn;
      if (!tn) return;
      const [o, c, k] = tn.shape;
      x.cap.textContent = `conv ${i + 1} · [${tn.shape.join(', ')}]`;
      const title = (g, m) => (c === 1 ? t('cnn.k_title', { i: i + 1, o: m, c: 0 }) : t('cnn.k_title', { i: i + 1, o: g, c: m }));
      if (c === 1) x.g.draw({ shape: [o, k, k], data: tn.data }, { title }); // [C_out, 1, k, k] -> [C_out, k, k]
      else x.g.draw(tn, { groupLabels: Array.from({ length: o }, (_, g) => t('cnn.k_row', { c: g })), title });
    });
  }

  function showConfusion(f) {
    const n = many() ? f.meta.arms.length : 1;
    while (confViews.length < n) confViews.push(matrixView(pConf.body, { digits: 0 }));
    confViews.forEach((v, i) => {
      const tn = f.tensors[`${prefix(i)}confusion`];
      v.el.hidden = i >= n || !tn;
      if (v.el.hidden) return;
      v.setName(t('cnn.confusion', { arm: armName(i) }));
      v.draw({ rows: tn, rowLabels: DIGITS.map((d) => `${t('cnn.true')} ${d}`), colLabels: DIGITS });
    });
  }

  function showSample(f) {
    const tn = f.tensors;
    const input = tn[`${prefix(0)}input`];
    if (input) sampleGrid.draw(input, {});
    const s = f.meta.sample;
    sampleLabel.textContent = t('cnn.sample_label', { i: s.index, y: s.label });
    showProbs(sampleProbs, sampleBars, tn, s.label);
    showMaps(sampleMaps, sampleGrids, tn);
  }

  function showTemplates(f) {
    const i = f.meta.arms?.findIndex((a, k) => armMeta(f, k).kind === 'mlp');
    const tn = i >= 0 ? f.tensors[`${prefix(i)}templates`] : null;
    pTpl.el.hidden = !tn;
    if (!tn) return;
    tplCap.textContent = t('cnn.templates', { h: tn.shape[0] });
    tplGrid.draw(tn, {});
  }

  function clearDrawing() {
    pad.clear();
    lastImage = null;
    seen.draw({ shape: [8, 8], data: new Float32Array(64) }, {});
    drawnBars.forEach((b) => { b.bars.clear(); b.cap.textContent = t('cnn.draw_first'); });
    drawnGrids.forEach((x) => { x.cap.hidden = true; x.g.canvas.hidden = true; });
  }
  clearBtn.onclick = clearDrawing;

  function relabelStatic() {
    clearBtn.textContent = t('cnn.clear');
    seenCap.textContent = t('cnn.seen');
    prevBtn.textContent = t('cnn.prev');
    nextBtn.textContent = t('cnn.next');
    note.textContent = t('cnn.gap_note');
    pad.el.setAttribute('aria-label', t('cnn.draw'));
  }
  relabelStatic();
  seen.draw({ shape: [8, 8], data: new Float32Array(64) }, {});

  function drawAll(f) {
    showSample(f);
    showKernels(f.tensors);
    showConfusion(f);
    showTemplates(f);
  }

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !f.meta.sample) return;
      last = f;
      drawAll(f);
      for (const b of [prevBtn, nextBtn]) b.disabled = store.get('role') !== 'driver';
      // Keep the drawing's answer current while the networks learn (a few times a second).
      if (lastImage && !f.replay && store.get('role') === 'driver' && performance.now() - lastInferAt > 500) sendInfer(lastImage);
    },
    infer(f) {
      if (!last || !f.meta || !f.meta.preds) return;
      if (f.tensors.input) seen.draw(f.tensors.input, {});
      showProbs(drawProbs, drawnBars, f.tensors);
      showMaps(drawMaps, drawnGrids, f.tensors);
    },
    scalars(rows) {
      for (const r of rows) Object.assign(latest, r.values);
      dash.onScalars(rows);
    },
    reset() { latest = {}; dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pDraw, pSample, pKern, pConf, pTpl]) p.relabel();
      relabelStatic();
      if (last) drawAll(last);
      if (!lastImage) clearDrawing();
    },
  };
}
