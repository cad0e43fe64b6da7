// View of `seq2seq`: one GRU encoder-decoder twice, with a single context vector and with
// Bahdanau attention. The dashboard draws loss and held-out accuracy by arm (free running,
// teacher forced: the gap is exposure bias) and the gradient waterfall; this view adds the
// held-out accuracy by input length, the attention arm's alignment on the example
// [T_dec, T_enc] as it forms, the example's decoder steps under both feeding regimes, the
// teacher-forcing pairs of 今天天气真好 (from the server's tokenisation) and the learner's
// own string. Every number comes from the server; the page only draws.
import { addStrings, pick, t } from '../core/i18n.js';
import { add, el, setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, throttleCost, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'seq2seq.loss': 'Training loss by arm (teacher forced, same batches)',
    'seq2seq.train_loss': 'loss',
    'seq2seq.acc': 'Held-out exact answers, free running',
    'seq2seq.acc_all': 'all lengths',
    'seq2seq.acc_long': 'long inputs',
    'seq2seq.tok': 'Held-out characters right: teacher forced vs free running',
    'seq2seq.tok_hint': 'Teacher forced: every step reads the true previous character. Free running: it reads its own previous output, so one mistake feeds the next. The gap between the two is exposure bias.',
    'seq2seq.tok_tf': 'teacher forced',
    'seq2seq.tok_free': 'free running',
    'seq2seq.bylen': 'Held-out accuracy by input length',
    'seq2seq.bylen_hint': '{n} held-out inputs, scored every {every} updates (last: step {step}). The single context vector must carry the whole input in {h} numbers: it holds short inputs and gives way as they grow.',
    'seq2seq.bylen_hint_dates': '{n} held-out dates, scored every {every} updates (last: step {step}). Their lengths come from how the date is written (month names, the Chinese form).',
    'seq2seq.bylen_none': 'Scored every {every} updates: press play or step.',
    'seq2seq.exact': 'exact answers (free running)',
    'seq2seq.chars': 'characters: teacher forced (dotted) vs free',
    'seq2seq.len': 'input length',
    'seq2seq.align': 'Attention’s alignment on the example',
    'seq2seq.align_hint_reverse': 'Rows: the decoder’s steps, fed the true previous character; columns: the input. Reversal asks step i for input character T−1−i: as the attention arm learns, does an anti-diagonal form from top right to bottom left? The line below counts the rows whose largest weight is on the mirrored character; some weight can fall on a neighbour (the encoder reads both ways, so neighbouring states also carry that character). The context-vector arm has no alignment: it reads one vector at every step.',
    'seq2seq.align_hint_dates': 'Rows: the decoder’s steps, fed the true previous character; columns: the input. Each output digit should look at where its year, month or day is written.',
    'seq2seq.antidiag': 'rows whose largest weight is on the mirrored input character: {hits} of {rows} here',
    'seq2seq.antidiag_held': '{pct}% of the rows of every held-out reversal (step {step})',
    'seq2seq.map_hint': 'Hover a cell to read its weight; click the map to enlarge it with its characters.',
    'seq2seq.out': 'output',
    'seq2seq.in': 'input',
    'seq2seq.example': '{src} → {want}',
    'seq2seq.writes': 'writes',
    'seq2seq.steps': 'The example, step by step: teacher forced vs free running',
    'seq2seq.steps_hint': 'Teacher forced (training): the decoder reads the true previous character. Free running (use): it reads what it wrote itself. Red: a wrong output.',
    'seq2seq.step': 'step',
    'seq2seq.label': 'should write',
    'seq2seq.tf_in': 'TF reads',
    'seq2seq.tf_out': 'TF writes',
    'seq2seq.fr_in': 'free reads',
    'seq2seq.fr_out': 'free writes',
    'seq2seq.worked': 'Teacher forcing on 今天天气真好',
    'seq2seq.worked_hint': 'One character, one id (both 天 are id {tian}). Under teacher forcing the decoder’s inputs are the target shifted right by one with BOS in front; each pair is one step’s input → label. Free running replaces each input after BOS by the decoder’s own previous output.',
    'seq2seq.ids': 'ids',
    'seq2seq.probe': 'Your own string',
    'seq2seq.probe_hint': 'Up to {max} characters from the task’s alphabet: {alphabet}. Both arms run free on it; the map’s rows are what the attention arm wrote.',
    'seq2seq.run': 'Run both arms',
    'seq2seq.placeholder_reverse': 'e.g. hello',
    'seq2seq.placeholder_dates': 'e.g. 2021年5月3日',
    'seq2seq.right': 'right',
    'seq2seq.no_target': 'not a date this task writes',
    'seq2seq.err_alphabet': 'Outside this task’s alphabet: {chars}. Use only: {alphabet}',
    'seq2seq.err_long': 'At most {max} characters.',
    'seq2seq.err_empty': 'Type a string first.',
  },
  zh: {
    'seq2seq.loss': '各变体的训练损失（教师强制，同样的批）',
    'seq2seq.train_loss': '损失',
    'seq2seq.acc': '留出集整串答对的比例（自由生成）',
    'seq2seq.acc_all': '所有长度',
    'seq2seq.acc_long': '长输入',
    'seq2seq.tok': '留出集字符准确率：教师强制与自由生成',
    'seq2seq.tok_hint': '教师强制：每一步读入真实的上一个字符。自由生成：读入自己上一步的输出，一步错了会喂给下一步。两者之间的差距就是曝光偏差。',
    'seq2seq.tok_tf': '教师强制',
    'seq2seq.tok_free': '自由生成',
    'seq2seq.bylen': '按输入长度的留出集准确率',
    'seq2seq.bylen_hint': '{n} 个留出输入，每 {every} 次更新评一次（最近：第 {step} 步）。单个上下文向量要用 {h} 个数装下整个输入：短输入装得下，输入一长就撑不住。',
    'seq2seq.bylen_hint_dates': '{n} 个留出日期，每 {every} 次更新评一次（最近：第 {step} 步）。长度取决于日期的写法（月份名、中文写法）。',
    'seq2seq.bylen_none': '每 {every} 次更新评一次：按播放或单步。',
    'seq2seq.exact': '整串答对（自由生成）',
    'seq2seq.chars': '字符：教师强制（点线）与自由生成',
    'seq2seq.len': '输入长度',
    'seq2seq.align': '注意力在示例上的对齐矩阵',
    'seq2seq.align_hint_reverse': '行：解码器的每一步（读入真实的上一个字符）；列：输入。倒序要求第 i 步写出输入的第 T−1−i 个字符：注意力变体学着学着，会不会长出一条从右上到左下的反对角线？下面一行数出最大权重落在镜像位置字符上的行；也可能有一部分权重落在它的邻居上（编码器双向读入，相邻的状态也带着这个字符）。上下文向量变体没有对齐：每一步读的都是同一个向量。',
    'seq2seq.align_hint_dates': '行：解码器的每一步（读入真实的上一个字符）；列：输入。每个输出数字应当看向年、月或日写在哪里。',
    'seq2seq.antidiag': '最大权重落在镜像位置输入字符上的行：这里 {rows} 行中的 {hits} 行',
    'seq2seq.antidiag_held': '全部留出倒序样本的行中占 {pct}%（第 {step} 步）',
    'seq2seq.map_hint': '鼠标停在格子上可读出权重；点击图放大，可看到各行各列的字符。',
    'seq2seq.out': '输出',
    'seq2seq.in': '输入',
    'seq2seq.example': '{src} → {want}',
    'seq2seq.writes': '写出',
    'seq2seq.steps': '示例逐步看：教师强制与自由生成',
    'seq2seq.steps_hint': '教师强制（训练时）：解码器读入真实的上一个字符。自由生成（使用时）：读入自己写出的字符。红色：写错的输出。',
    'seq2seq.step': '步',
    'seq2seq.label': '应写',
    'seq2seq.tf_in': '教师强制·输入',
    'seq2seq.tf_out': '教师强制·输出',
    'seq2seq.fr_in': '自由生成·输入',
    'seq2seq.fr_out': '自由生成·输出',
    'seq2seq.worked': '教师强制：今天天气真好',
    'seq2seq.worked_hint': '一个字符一个 id（两个“天”都是 id {tian}）。教师强制下，解码器的输入是目标右移一位、前面加 BOS；每一对是一步的输入 → 标签。自由生成把 BOS 之后的每个输入换成解码器自己上一步的输出。',
    'seq2seq.ids': 'id',
    'seq2seq.probe': '你自己的字符串',
    'seq2seq.probe_hint': '最多 {max} 个字符，只能用这个任务的字符：{alphabet}。两个变体都自由生成；图的行是注意力变体写出的字符。',
    'seq2seq.run': '让两个变体都试试',
    'seq2seq.placeholder_reverse': '例如 hello',
    'seq2seq.placeholder_dates': '例如 3 May 2021',
    'seq2seq.right': '正确',
    'seq2seq.no_target': '不是这个任务的日期写法',
    'seq2seq.err_alphabet': '不在这个任务的字符表里：{chars}。只能用：{alphabet}',
    'seq2seq.err_long': '最多 {max} 个字符。',
    'seq2seq.err_empty': '先输入一个字符串。',
  },
});

export const stylesheet = '/css/labs/seq2seq.css';
export const lazyPlotly = true; // the maps and tables are DOM and canvas; curves when plotly comes

const show = (c) => (c === ' ' ? '␣' : c);

export default function mount(root, ctx) {
  root.innerHTML = '';
  const { store } = ctx;
  const view = el('div', 's2s-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    armTitles: true,
    charts: [
      { title: 'seq2seq.loss', keys: [{ key: 'loss', name: 'seq2seq.train_loss' }], logY: true },
      { title: 'seq2seq.acc', keys: [{ key: 'seq_acc', name: 'seq2seq.acc_all', markers: true }, { key: 'long_seq_acc', name: 'seq2seq.acc_long', markers: true, dash: 'dot' }], kept: false, legend: 'low' },
      { title: 'seq2seq.tok', hint: 'seq2seq.tok_hint', keys: [{ key: 'tok_acc_tf', name: 'seq2seq.tok_tf', markers: true, dash: 'dot' }, { key: 'tok_acc_free', name: 'seq2seq.tok_free', markers: true }], kept: false, legend: 'low' },
    ],
  });
  const pics = dash.picturesEl;

  // -- accuracy by input length -----------------------------------------------------------
  const pLen = panel(pics, 'seq2seq.bylen', { chart: false });
  pLen.el.classList.add('s2s-bylen');
  const lenHint = add(pLen.el, 'p', 'hint');
  const modes = add(pLen.body, 'div', 's2s-modes');
  let lenMode = 'exact';
  const modeBtn = (mode, key) => {
    const b = add(modes, 'button', 's2s-mode');
    b.type = 'button';
    b.dataset.mode = mode;
    b.dataset.key = key;
    b.onclick = () => { lenMode = mode; drawLen(); };
    return b;
  };
  const modeBtns = [modeBtn('exact', 'seq2seq.exact'), modeBtn('chars', 'seq2seq.chars')];
  const lenChart = add(pLen.body, 'div', 'chart');

  // -- the alignment ----------------------------------------------------------------------
  const pAlign = panel(pics, 'seq2seq.align', { chart: false });
  pAlign.el.classList.add('s2s-align');
  const alignHint = add(pAlign.el, 'p', 'hint');
  const exampleEl = add(pAlign.body, 'div', 's2s-example');
  const antidiag = add(pAlign.body, 'p', 's2s-antidiag');
  const antidiagHeld = add(pAlign.body, 'p', 's2s-antidiag-held');
  let heldAd = null; // the latest held-out share {value, step}, from the scalar rows
  const mapEl = add(pAlign.body, 'div', 's2s-map');
  const mapHint = add(pAlign.body, 'p', 's2s-map-hint');
  let rowLabels = [], colLabels = [];
  const tip = (labels) => (h) => `${t('seq2seq.out')} ${labels.rows[h.row] ?? h.row} (${h.row}) · ${t('seq2seq.in')} ${labels.cols[h.col] ?? h.col} (${h.col}) · ${h.value.toFixed(3)}`;
  const shown = { rows: rowLabels, cols: colLabels };
  const map = mapGrid(mapEl, { maxCell: 300, minCell: 120, tip: tip(shown) });

  // -- the example, step by step ----------------------------------------------------------
  const pSteps = panel(pics, 'seq2seq.steps', { chart: false, hint: 'seq2seq.steps_hint', wide: true });
  pSteps.el.classList.add('s2s-steps');
  const stepsEl = add(pSteps.body, 'div', 's2s-step-tables');

  // -- the worked example -----------------------------------------------------------------
  const pWorked = panel(dash.grid, 'seq2seq.worked', { chart: false });
  pWorked.el.classList.add('s2s-worked');
  const workedHint = add(pWorked.el, 'p', 'hint');
  const workedEl = add(pWorked.body, 'div', 's2s-pairs');

  // -- the learner's string ---------------------------------------------------------------
  const pProbe = panel(dash.grid, 'seq2seq.probe', { chart: false, wide: true });
  pProbe.el.classList.add('s2s-probe');
  const probeHint = add(pProbe.el, 'p', 'hint');
  const form = add(pProbe.body, 'form', 's2s-form');
  const input = add(form, 'input', 's2s-input');
  input.type = 'text';
  input.name = 'text';
  input.autocomplete = 'off';
  const runBtn = add(form, 'button', 's2s-run');
  runBtn.type = 'submit';
  const probeOut = add(pProbe.body, 'div', 's2s-probe-out');
  const probeMapEl = add(pProbe.body, 'div', 's2s-map');
  probeMapEl.hidden = true; // until the first answer
  const probeShown = { rows: [], cols: [] };
  const probeMap = mapGrid(probeMapEl, { maxCell: 300, minCell: 120, tip: tip(probeShown) });
  let probeText = null;
  let probeAt = 0;
  const sendProbe = () => {
    if (!probeText || store.get('role') !== 'driver') return;
    probeAt = performance.now();
    ctx.infer({ text: probeText });
  };
  form.onsubmit = (e) => {
    e.preventDefault();
    probeText = input.value;
    sendProbe();
  };

  let last = null;
  let probe = null;
  const armName = (a, i) => pick(a.title) || a.label || String(i);

  const drawLen = throttleCost(() => {
    if (!last) return;
    const m = last.meta;
    for (const b of modeBtns) { setText(b, t(b.dataset.key)); b.setAttribute('aria-pressed', String(b.dataset.mode === lenMode)); }
    const data = [];
    m.arms.forEach((a, i) => {
      const acc = last.tensors[`arm.${i}.acc_by_len`];
      if (!acc) return;
      const n = acc.shape[1];
      const row = (r) => Array.from(acc.data.subarray(r * n, (r + 1) * n));
      const color = COLORS[i % COLORS.length];
      if (lenMode === 'exact') data.push({ x: m.lengths, y: row(0), name: armName(a, i), mode: 'lines+markers', line: { color } });
      else {
        data.push({ x: m.lengths, y: row(1), name: `${armName(a, i)} · ${t('seq2seq.tok_free')}`, mode: 'lines+markers', line: { color } });
        data.push({ x: m.lengths, y: row(2), name: `${armName(a, i)} · ${t('seq2seq.tok_tf')}`, mode: 'lines+markers', line: { color, dash: 'dot' } });
      }
    });
    lenChart.dataset.traces = String(data.length);
    const layout = baseLayout({
      showlegend: true,
      legend: { orientation: 'h', x: 0, y: 1.02, yanchor: 'bottom' },
      margin: { l: 48, r: 12, t: 40, b: 40 },
      xaxis: { title: { text: t('seq2seq.len') }, dtick: 1 },
      yaxis: { range: [-0.03, 1.03], tickformat: '.0%' },
    });
    whenPlotly((P) => P.react(lenChart, data, layout, CONFIG));
  });

  function drawExample() {
    const m = last.meta;
    const att = m.arms.findIndex((a) => a.attention);
    const ex = m.arms[att].example;
    setText(mapHint, t('seq2seq.map_hint'));
    setText(alignHint, t(m.task === 'reverse' ? 'seq2seq.align_hint_reverse' : 'seq2seq.align_hint_dates'));
    exampleEl.replaceChildren(el('p', 's2s-src', t('seq2seq.example', { src: ex.source.join(''), want: ex.target })));
    m.arms.forEach((a, i) => {
      const line = add(exampleEl, 'p', `s2s-decoded ${a.example.right ? 'ok' : 'bad'}`);
      line.dataset.arm = a.label;
      const sw = add(line, 'i', 's2s-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      add(line, 'b', null, armName(a, i));
      add(line, 'span', null, ` ${t('seq2seq.writes')} `);
      add(line, 'code', null, a.example.decoded || '∅');
      add(line, 'span', 's2s-mark', a.example.right ? ' ✓' : ' ✗');
    });
    const ad = ex.antidiag;
    antidiag.hidden = !ad;
    if (ad) {
      setText(antidiag, t('seq2seq.antidiag', ad));
      antidiag.dataset.hits = String(ad.hits);
      antidiag.dataset.rows = String(ad.rows);
    }
    antidiagHeld.hidden = !ad || !heldAd;
    if (ad && heldAd) setText(antidiagHeld, t('seq2seq.antidiag_held', { pct: Math.round(100 * heldAd.value), step: heldAd.step }));
    const tensor = last.tensors[`arm.${att}.alignment`];
    if (tensor) {
      shown.rows = ex.align_rows.map(show);
      shown.cols = ex.source.map(show);
      map.draw(tensor, { rowLabels: shown.rows, colLabels: shown.cols, rowTitle: t('seq2seq.out'), colTitle: t('seq2seq.in'), title: () => t('seq2seq.align') });
    }
  }

  function drawSteps() {
    const m = last.meta;
    const heads = ['seq2seq.step', 'seq2seq.label', 'seq2seq.tf_in', 'seq2seq.tf_out', 'seq2seq.fr_in', 'seq2seq.fr_out'];
    stepsEl.replaceChildren(...m.arms.map((a, i) => {
      const box = el('div', 's2s-step-box');
      box.dataset.arm = a.label;
      const h = add(box, 'h4', null);
      const sw = add(h, 'i', 's2s-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      h.append(armName(a, i));
      const table = add(box, 'table', 's2s-table');
      const tr = add(add(table, 'thead'), 'tr');
      for (const k of heads) add(tr, 'th', null, t(k));
      const body = add(table, 'tbody');
      (a.example.steps || []).forEach(([want, tfIn, tfOut, frIn, frOut], k) => {
        const row = add(body, 'tr');
        add(row, 'td', 's2s-k', String(k));
        add(row, 'td', null, show(want));
        add(row, 'td', null, show(tfIn));
        add(row, 'td', tfOut === want ? 'ok' : 'bad', show(tfOut));
        add(row, 'td', k > 0 && frIn !== a.example.steps[k][1] ? 'off' : null, show(frIn));
        add(row, 'td', frOut === want ? 'ok' : 'bad', show(frOut));
      });
      return box;
    }));
  }

  function drawWorked() {
    const w = last.meta.worked;
    setText(workedHint, t('seq2seq.worked_hint', { tian: w.ids[1] }));
    const ids = el('p', 's2s-ids', `${w.text} → ${t('seq2seq.ids')} [${w.ids.join(', ')}]`);
    const list = el('ol', 's2s-pair-list');
    w.inputs.forEach(([inTok, inId], k) => {
      const [outTok, outId] = w.labels[k];
      const li = add(list, 'li', 's2s-pair');
      li.dataset.pair = `${inTok}→${outTok}`;
      add(li, 'code', null, inTok);
      add(li, 'small', null, String(inId));
      add(li, 'span', 's2s-arrow', '→');
      add(li, 'code', null, outTok);
      add(li, 'small', null, String(outId));
    });
    workedEl.replaceChildren(ids, list);
  }

  function drawProbeStatic() {
    if (!last) return;
    const m = last.meta;
    setText(probeHint, t('seq2seq.probe_hint', { max: m.max_input, alphabet: m.alphabet.trim() }));
    input.maxLength = m.max_input;
    input.placeholder = t(m.task === 'reverse' ? 'seq2seq.placeholder_reverse' : 'seq2seq.placeholder_dates');
    setText(runBtn, t('seq2seq.run'));
    runBtn.disabled = store.get('role') !== 'driver';
  }

  function drawProbe() {
    if (!probe || !last) return;
    const p = probe.meta.probe;
    probeOut.replaceChildren(...p.arms.map((a, i) => {
      const line = el('p', `s2s-decoded ${a.right ? 'ok' : a.target === null ? '' : 'bad'}`);
      line.dataset.arm = last.meta.arms[i].label;
      const sw = add(line, 'i', 's2s-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      add(line, 'b', null, armName(last.meta.arms[i], i));
      add(line, 'span', null, ` ${t('seq2seq.writes')} `);
      add(line, 'code', null, a.decoded || '∅');
      add(line, 'span', 's2s-mark', a.target === null ? ` (${t('seq2seq.no_target')})` : a.right ? ' ✓' : ` ✗ (${t('seq2seq.right')}: ${a.target})`);
      return line;
    }));
    const att = last.meta.arms.findIndex((a) => a.attention);
    const tensor = probe.tensors[`arm.${att}.alignment`];
    probeMapEl.hidden = !tensor;
    if (tensor) {
      probeShown.rows = p.arms[att].align_rows.map(show);
      probeShown.cols = p.arms[att].source.map(show);
      probeMap.draw(tensor, { rowLabels: probeShown.rows, colLabels: probeShown.cols, rowTitle: t('seq2seq.out'), colTitle: t('seq2seq.in'), title: () => t('seq2seq.probe') });
    }
  }

  function draw() {
    if (!last) return;
    const m = last.meta;
    const h = m.d_hidden;
    const step = m.evaluated_at;
    setText(lenHint, step === null || step === undefined ? t('seq2seq.bylen_none', { every: m.eval_every }) : t(m.task === 'reverse' ? 'seq2seq.bylen_hint' : 'seq2seq.bylen_hint_dates', { n: m.held_out, every: m.eval_every, step, h }));
    drawLen();
    drawExample();
    drawSteps();
    drawWorked();
    drawProbeStatic();
  }

  store.on('role', () => drawProbeStatic());

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.arms[0].example) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
      // Keep the learner's string current while the arms learn (a couple of times a second).
      if (probeText && !f.replay && performance.now() - probeAt > 700) sendProbe();
    },
    infer(f) {
      if (!f.meta || !f.meta.probe) return;
      probe = f;
      drawProbe();
      root.dataset.probe = f.meta.probe.text;
    },
    scalars(rows) {
      for (const r of rows) {
        for (const [k, v] of Object.entries(r.values)) if (/^arm\.\d+\.antidiag$/.test(k)) heldAd = { value: v, step: r.step };
      }
      dash.onScalars(rows);
    },
    reset() { heldAd = null; dash.reset(); },
    relabel() {
      dash.relabel();
      for (const p of [pLen, pAlign, pSteps, pWorked, pProbe]) p.relabel();
      map.relabel();
      probeMap.relabel();
      draw();
      drawProbe();
    },
  };
}
