// View of `regularization`: one study at a time (dropout rate, weight decay, L1 vs L2, batch
// size with or without lr scaling), its arms trained side by side on digits that overfit in
// seconds. The dashboard draws the batch loss, train vs held-out accuracy and their gap by
// arm, and the gradient waterfall; this view adds the study buttons, the held-out loss with
// each arm's early-stopping point (best loss ◆, where patience ran out ✕), and dropout on a
// real activation. Every number comes from the server.
import { addStrings, t } from '../core/i18n.js';
import { setText, el } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, finite, fmt, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'reg.loss': 'Training loss on each batch, by arm',
    'reg.batch_loss': 'batch loss',
    'reg.acc': 'Accuracy: whole training split (solid) vs held out (dotted)',
    'reg.train_acc': 'train', 'reg.val_acc': 'held out',
    'reg.gap': 'Gap: train − held-out accuracy',
    'reg.gap_key': 'gap',
    'reg.study': 'Study',
    'reg.s_dropout': 'Dropout rate', 'reg.s_weight_decay': 'Weight decay', 'reg.s_l1_l2': 'L1 vs L2', 'reg.s_batch_size': 'Batch size',
    'reg.scale_on': 'Scale lr with the batch (lr·b/{b})', 'reg.scale_off': 'Keep lr fixed for every batch',
    'reg.val': 'Held-out loss and early stopping',
    'reg.val_hint': '◆ the best held-out loss so far (early stopping keeps those weights); ✕ where {p} evaluations without a better one would have stopped the run. Evaluated every {e} updates on {n} held-out images ({m} training images).',
    'reg.best': '{arm}: best',
    'reg.stop': '{arm}: stop',
    'reg.val_y': 'held-out loss',
    'reg.drop': 'Dropout on a real activation',
    'reg.drop_hint': 'One training image’s last hidden layer (first {n} units). Eval mode: as is. Training mode: each unit dropped with probability p, and the kept ones scaled by 1/(1 − p), so the layer’s expected output is unchanged and eval mode needs no correction. Dropout sits on the late layer here, as it usually does.',
    'reg.unit': 'unit', 'reg.eval_h': 'eval', 'reg.train_h': 'train (×{s})',
    'reg.read_best': '{arm} · best step (held-out loss)',
    'reg.read_sparse': '{arm} · weights with |w| < 0.001',
    'reg.none': 'none yet',
    'reg.spread': 'Read off this run at step {step}: train − held-out accuracy gap (points) {gaps}; held-out accuracy {accs}.',
    'reg.small': 'The arms’ held-out accuracy differs by {d} points at most: a small effect on these settings, which another seed may order differently. Change the training images or the steps and compare.',
    'reg.large': 'The arms’ held-out accuracy spans {d} points.',
  },
  zh: {
    'reg.loss': '每个批上的训练损失（各变体）',
    'reg.batch_loss': '批损失',
    'reg.acc': '准确率：整个训练集（实线）与留出集（虚线）',
    'reg.train_acc': '训练', 'reg.val_acc': '留出',
    'reg.gap': '差距：训练准确率 − 留出准确率',
    'reg.gap_key': '差距',
    'reg.study': '比较',
    'reg.s_dropout': 'Dropout 比例', 'reg.s_weight_decay': '权重衰减', 'reg.s_l1_l2': 'L1 与 L2', 'reg.s_batch_size': '批大小',
    'reg.scale_on': '学习率随批大小放大（lr·b/{b}）', 'reg.scale_off': '所有批大小用同一个学习率',
    'reg.val': '留出集损失与早停',
    'reg.val_hint': '◆ 到目前为止最好的留出集损失（早停留下这时的权重）；✕ 连续 {p} 次评估没有更好、早停会在这里停下。每 {e} 次更新在 {n} 张留出图片上评估（训练图片 {m} 张）。',
    'reg.best': '{arm}：最好',
    'reg.stop': '{arm}：停止',
    'reg.val_y': '留出集损失',
    'reg.drop': '真实激活上的 dropout',
    'reg.drop_hint': '一张训练图片在最后一个隐藏层的激活（前 {n} 个单元）。eval 模式：原样。训练模式：每个单元以概率 p 被丢弃，保留的单元乘以 1/(1 − p)，所以这一层输出的期望不变，eval 模式不用再修正。这里 dropout 放在靠后的层，通常也是这样。',
    'reg.unit': '单元', 'reg.eval_h': 'eval', 'reg.train_h': '训练（×{s}）',
    'reg.read_best': '{arm} · 最好的一步（留出损失）',
    'reg.spread': '从本次训练读出（第 {step} 步）：训练 − 留出准确率的差距（百分点）{gaps}；留出准确率 {accs}。',
    'reg.small': '各变体的留出准确率最多相差 {d} 个百分点：在这些设置下效应很小，换个随机种子顺序可能就不同。改改训练图片数或步数再比一比。',
    'reg.large': '各变体的留出准确率相差 {d} 个百分点。',
    'reg.read_sparse': '{arm} · |w| < 0.001 的权重',
    'reg.none': '还没有',
  },
});

export const stylesheet = '/css/labs/regularization.css';
export const lazyPlotly = true;

const STUDIES = ['dropout', 'weight_decay', 'l1_l2', 'batch_size'];
const VAL_MS = 400;


export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'reg-view');
  root.append(view);
  let last = null;
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'reg.loss', keys: [{ key: 'loss', name: 'reg.batch_loss' }], logY: true },
      { title: 'reg.acc', keys: [{ key: 'train_acc', name: 'reg.train_acc', markers: true }, { key: 'val_acc', name: 'reg.val_acc', dash: 'dot', markers: true }], legend: 'low', kept: false },
      { title: 'reg.gap', keys: [{ key: 'gap', name: 'reg.gap_key', markers: true }], kept: false },
    ],
    readout: (f, arms) => arms.flatMap((a) => {
      const m = a.label && f.meta.arms.find((x) => x.label === a.label);
      if (!m) return [];
      const e = m.early || {};
      return [
        { label: t('reg.read_best', { arm: a.label }), value: e.step === undefined || e.step === null ? t('reg.none') : `${e.step} (${fmt(e.val_loss, 3)})` },
        { label: t('reg.read_sparse', { arm: a.label }), value: `${(100 * m.sparsity).toFixed(1)}%` },
      ];
    }),
  });
  const pics = dash.picturesEl;

  // -- study buttons ------------------------------------------------------------------------
  const bar = el('div', 'reg-study');
  const label = el('span', 'reg-study-label');
  bar.append(label);
  const buttons = STUDIES.map((s) => {
    const b = el('button');
    b.type = 'button';
    b.dataset.act = `study-${s}`;
    b.onclick = () => ctx.setParams({ study: s });
    bar.append(b);
    return [s, b];
  });
  const scaleBtn = el('button', 'reg-scale');
  scaleBtn.type = 'button';
  scaleBtn.dataset.act = 'scale-lr';
  scaleBtn.onclick = () => ctx.setParams({ scale_lr: !ctx.params().scale_lr });
  bar.append(scaleBtn);
  pics.append(bar);
  // How far apart the arms are, read off the latest evaluation: where the effect is small
  // the page says so instead of letting close curves imply a clear ordering.
  const spread = el('p', 'hint reg-spread');
  pics.append(spread);
  let latest = {}; // arm index -> { step, gap, acc }
  function drawSpread() {
    const arms = last && last.meta && Array.isArray(last.meta.arms) ? last.meta.arms : [];
    const got = arms.map((a, i) => [a.label, latest[i]]).filter(([, v]) => v && finite(v.acc) && finite(v.gap));
    if (got.length < 2) { setText(spread, ''); return; }
    const step = Math.max(...got.map(([, v]) => v.step));
    const pts = (x) => `${(100 * x).toFixed(1)}`;
    const gaps = got.map(([l, v]) => `${l}: ${pts(v.gap)}`).join(', ');
    const accs = got.map(([l, v]) => `${l}: ${pts(v.acc)}%`).join(', ');
    const accVals = got.map(([, v]) => v.acc);
    const d = Math.max(...accVals) - Math.min(...accVals);
    const size = d < 0.05 ? t('reg.small', { d: pts(d) }) : t('reg.large', { d: pts(d) });
    setText(spread, `${t('reg.spread', { step, gaps, accs })} ${size}`);
    spread.dataset.spread = d.toFixed(4);
  }

  // -- held-out loss with early stopping ----------------------------------------------------
  const pVal = panel(pics, 'reg.val', { wide: true });
  pVal.el.classList.add('reg-val');
  const valHint = el('p', 'hint');
  pVal.el.append(valHint);
  let val = new Map(); // arm index -> [[step, val_loss]]
  let drawnAt = 0;
  let timer = null;

  function drawVal() {
    if (!last) return;
    const now = performance.now();
    if (now - drawnAt < VAL_MS) { clearTimeout(timer); timer = setTimeout(drawVal, VAL_MS); return; }
    drawnAt = now;
    const arms = last.meta.arms;
    const data = [];
    const marks = { best: { x: [], y: [], text: [], color: [] }, stop: { x: [], y: [], text: [], color: [] } };
    arms.forEach((a, i) => {
      const pts = val.get(i) || [];
      const color = COLORS[i % COLORS.length];
      data.push({ type: 'scatter', mode: 'lines', name: a.label, x: pts.map((p) => p[0]), y: pts.map((p) => p[1]), line: { color, width: 2 } });
      const at = (s) => pts.find((p) => p[0] === s);
      const e = a.early || {};
      for (const [k, s] of [['best', e.step], ['stop', e.stop]]) {
        const p = s === undefined || s === null ? null : at(s);
        if (!p) continue;
        marks[k].x.push(p[0]); marks[k].y.push(p[1]); marks[k].color.push(color);
        marks[k].text.push(t(k === 'best' ? 'reg.best' : 'reg.stop', { arm: a.label }));
      }
    });
    data.push({ type: 'scatter', mode: 'markers', name: '◆', x: marks.best.x, y: marks.best.y, text: marks.best.text, hovertemplate: `%{text}: ${t('axis_step')} %{x}, %{y:.3f}<extra></extra>`, marker: { symbol: 'diamond', size: 12, color: marks.best.color, line: { color: '#222', width: 1 } }, showlegend: false });
    data.push({ type: 'scatter', mode: 'markers', name: '✕', x: marks.stop.x, y: marks.stop.y, text: marks.stop.text, hovertemplate: `%{text}: ${t('axis_step')} %{x}, %{y:.3f}<extra></extra>`, marker: { symbol: 'x', size: 11, color: marks.stop.color }, showlegend: false });
    pVal.chart.dataset.best = marks.best.x.join(',');
    pVal.chart.dataset.stop = marks.stop.x.join(',');
    const layout = baseLayout({ xaxis: { title: { text: t('axis_step') } }, yaxis: { title: { text: t('reg.val_y') } }, legend: { orientation: 'h', y: 1.12 } });
    whenPlotly((P) => P.react(pVal.chart, data, layout, CONFIG));
  }

  // -- dropout on a real activation ---------------------------------------------------------
  const pDrop = panel(pics, 'reg.drop', { chart: false, wide: true });
  const dropHint = el('p', 'hint');
  const dropTables = el('div', 'reg-drop');
  pDrop.body.append(dropTables, dropHint);

  function drawDrop() {
    const arms = last.meta.arms.filter((a) => a.dropout_demo);
    pDrop.el.hidden = !arms.length;
    if (!arms.length) return;
    setText(dropHint, t('reg.drop_hint', { n: arms[0].dropout_demo.h.length }));
    dropTables.replaceChildren(...arms.map((a) => {
      const d = a.dropout_demo;
      const table = el('table', 'reg-table');
      table.dataset.p = String(d.p);
      const cap = el('caption', null, `${a.label}`);
      const head = el('tr');
      head.append(el('th', null, t('reg.unit')), ...d.h.map((_, j) => el('th', null, String(j))));
      const ev = el('tr');
      ev.append(el('td', null, t('reg.eval_h')), ...d.h.map((v) => el('td', null, fmt(v, 3))));
      const tr = el('tr', 'reg-train');
      tr.append(el('td', null, t('reg.train_h', { s: fmt(d.scale, 3) })), ...d.train.map((v, j) => el('td', d.kept[j] ? 'kept' : 'dropped', d.kept[j] ? fmt(v, 3) : '0')));
      table.append(cap, head, ev, tr);
      return table;
    }));
  }

  function drawBar() {
    const p = ctx.params();
    setText(label, t('reg.study'));
    for (const [s, b] of buttons) { setText(b, t(`reg.s_${s}`)); b.classList.toggle('on', p.study === s); }
    setText(scaleBtn, t(p.scale_lr ? 'reg.scale_off' : 'reg.scale_on', { b: last ? last.meta.base_batch : 32 }));
    scaleBtn.hidden = p.study !== 'batch_size';
    bar.hidden = ctx.store.get('role') !== 'driver';
  }

  function draw() {
    if (!last) return;
    const m = last.meta;
    setText(valHint, t('reg.val_hint', { p: m.patience, e: m.eval_every, n: m.n_test, m: m.n_train }));
    drawBar();
    drawVal();
    drawDrop();
  }

  ctx.store.on('role', drawBar);
  ctx.store.on('params', drawBar);

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.study) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) {
      dash.onScalars(rows);
      for (const { step, values } of rows) {
        for (const [k, v] of Object.entries(values)) {
          const m = /^arm\.(\d+)\.val_loss$/.exec(k) || (k === 'val_loss' ? [k, '0'] : null);
          if (!m || !finite(v)) continue;
          const i = Number(m[1]);
          if (!val.has(i)) val.set(i, []);
          const pts = val.get(i);
          if (!pts.length || pts[pts.length - 1][0] < step) pts.push([step, v]);
        }
      }
      for (const { step, values } of rows) {
        for (const [k, v] of Object.entries(values)) {
          const m = /^arm\.(\d+)\.(val_acc|gap)$/.exec(k);
          if (!m || !finite(v)) continue;
          const e = (latest[m[1]] ??= { step: 0 });
          e.step = step;
          e[m[2] === 'val_acc' ? 'acc' : 'gap'] = v;
        }
      }
      if (last) { drawVal(); drawSpread(); } // throttled: the rows of a step may follow its frame
    },
    reset() { dash.reset(); val = new Map(); drawnAt = 0; latest = {}; setText(spread, ''); },
    relabel() {
      dash.relabel();
      for (const p of [pVal, pDrop]) p.relabel();
      drawnAt = 0;
      draw();
      drawSpread();
    },
  };
}
