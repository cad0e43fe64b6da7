// View of `memory`: a plain RNN, a GRU and an LSTM learn to recall the flagged first symbol
// after N distractors. The dashboard draws loss and held-out accuracy by arm; this view adds
// the example (its tokens and each arm's answer), the gates over time on it (LSTM i/f/o,
// GRU z/r: a row a unit, a column a step), the states, the unit that holds across the delay
// (numbers from the server), and in sweep mode accuracy vs delay as the points come in.
import { addStrings, t } from '../core/i18n.js';
import { el, setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { mapGrid } from '../components/mapGrid.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, whenPlotly } from '../components/plot.js';

addStrings({
  en: {
    'memory.loss': 'Training loss by arm (same batches, same seed)',
    'memory.train_loss': 'loss',
    'memory.acc': 'Held-out accuracy at this delay (512 sequences)',
    'memory.held_acc': 'held-out',
    'memory.example': 'The example: remember the first symbol, answer at “?”',
    'memory.example_hint': 'Step 0 carries the flag “remember this”; the {n} symbols after it are distractors drawn from the same symbols. Chance is {chance}.',
    'memory.answers': 'Answer',
    'memory.right': 'right',
    'memory.wrong': 'wrong',
    'memory.lucky': 'right, by chance?',
    'memory.arm_acc': 'held-out {acc}, chance {chance}',
    'memory.answer_note': '({x})',
    'memory.lstm_gates': 'LSTM gates on the example',
    'memory.gru_gates': 'GRU gates on the example',
    'memory.gates_hint': 'A row per hidden unit, a column per time step; 0 dark, 1 bright. Click a map to enlarge it.',
    'memory.states': 'States on the example',
    'memory.states_hint': 'Hidden states of every arm and the LSTM’s cell, a row per unit, a column per step (blue −1, red +1; the cell can go beyond ±1, its colour then saturates).',
    'memory.input_gate': 'input gate i',
    'memory.forget_gate': 'forget gate f',
    'memory.output_gate': 'output gate o',
    'memory.update_gate': 'update gate z (1 keeps)',
    'memory.reset_gate': 'reset gate r',
    'memory.hidden': 'hidden h',
    'memory.cell': 'cell c',
    'memory.unit': 'unit',
    'memory.step': 'step',
    'memory.hold_lstm': 'LSTM, unit {unit}: the forget gate stays at or above {min} at every delay step, so Π f = {kept} of what its cell held at step 0 reaches the cue (mean f over all units along the delay: {mean}).',
    'memory.hold_gru': 'GRU, unit {unit}: the update gate z stays at or above {min} along the delay, Π z = {kept}: the share of the state at step 0 that is kept, not rewritten.',
    'memory.hold_rnn': 'Plain RNN: no gate. Every distractor goes through the same W_hh into its whole state. Held-out accuracy {acc} (chance {chance}).',
    'memory.sweep': 'Sweep: held-out accuracy vs delay',
    'memory.sweep_hint': 'For each delay the three arms start again from their first weights, train {steps} steps at it, and are scored on 512 held-out sequences at that delay. Points appear as each delay finishes.',
    'memory.sweep_off': 'Choose the mode “Sweep: accuracy vs delay” and press play to fill this in.',
    'memory.delay_axis': 'delay N',
    'memory.acc_axis': 'accuracy',
    'memory.chance': 'chance',
    'memory.now_delay': 'now training at delay {n}',
  },
  zh: {
    'memory.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'memory.train_loss': '损失',
    'memory.acc': '当前延迟下的留出集准确率（512 条序列）',
    'memory.held_acc': '留出集',
    'memory.example': '示例：记住第一个符号，在“?”处回答',
    'memory.example_hint': '第 0 步带着“记住它”的标记；之后的 {n} 个符号是干扰，取自同一组符号。随机猜测的准确率是 {chance}。',
    'memory.answers': '回答',
    'memory.right': '对',
    'memory.wrong': '错',
    'memory.lucky': '对，碰巧？',
    'memory.arm_acc': '留出集 {acc}，随机猜测的水平 {chance}',
    'memory.answer_note': '（{x}）',
    'memory.lstm_gates': 'LSTM 在示例上的门',
    'memory.gru_gates': 'GRU 在示例上的门',
    'memory.gates_hint': '每行一个隐藏单元，每列一个时间步；0 暗，1 亮。点击放大。',
    'memory.states': '示例上的状态',
    'memory.states_hint': '各变体的隐藏状态，以及 LSTM 的记忆单元 c；每行一个单元，每列一步（蓝为 −1，红为 +1；记忆单元可超出 ±1，颜色到头为止）。',
    'memory.input_gate': '输入门 i',
    'memory.forget_gate': '遗忘门 f',
    'memory.output_gate': '输出门 o',
    'memory.update_gate': '更新门 z（1 为保留）',
    'memory.reset_gate': '重置门 r',
    'memory.hidden': '隐藏状态 h',
    'memory.cell': '记忆单元 c',
    'memory.unit': '单元',
    'memory.step': '步',
    'memory.hold_lstm': 'LSTM 的第 {unit} 个单元：延迟中每一步遗忘门都不低于 {min}，所以第 0 步存进记忆单元的内容有 Π f = {kept} 留到了提问时（延迟中所有单元的 f 平均为 {mean}）。',
    'memory.hold_gru': 'GRU 的第 {unit} 个单元：延迟中更新门 z 都不低于 {min}，Π z = {kept}：第 0 步的状态被保留（而不是被改写）的份额。',
    'memory.hold_rnn': '普通 RNN：没有门。每个干扰符号都经过同一个 W_hh 改写整个状态。留出集准确率 {acc}（随机猜测的水平 {chance}）。',
    'memory.sweep': '扫描：留出集准确率随延迟变化',
    'memory.sweep_hint': '每个延迟上，三个变体都从最初的权重重新开始，在该延迟上训练 {steps} 步，再用该延迟的 512 条留出序列打分。每完成一个延迟就出现一个点。',
    'memory.sweep_off': '把模式选为“扫描：准确率随延迟变化”并开始运行，这张图就会逐点填上。',
    'memory.delay_axis': '延迟 N',
    'memory.acc_axis': '准确率',
    'memory.chance': '随机猜测的水平',
    'memory.now_delay': '正在延迟 {n} 上训练',
  },
});

export const stylesheet = '/css/labs/memory.css';
export const lazyPlotly = true; // maps and text are canvas and DOM; curves when plotly comes

const SWEEP_MS = 400;

export default function mount(root, ctx) {
  root.innerHTML = '';
  const view = el('div', 'memory-view');
  root.append(view);
  const dash = dashboard(view, ctx, {
    charts: [
      { title: 'memory.loss', keys: [{ key: 'loss', name: 'memory.train_loss' }], logY: true },
      { title: 'memory.acc', keys: [{ key: 'held_acc', name: 'memory.held_acc', markers: true }], legend: 'low', kept: false },
    ],
  });
  const pics = dash.picturesEl;

  // -- the example and the answers ---------------------------------------------------------
  const pEx = panel(pics, 'memory.example', { chart: false, wide: true });
  const exHint = el('p', 'hint');
  const strip = el('div', 'memory-strip');
  const answers = el('div', 'memory-answers');
  const holds = el('div', 'memory-holds');
  pEx.body.append(exHint, strip, answers, holds);

  // -- gates and states --------------------------------------------------------------------
  const gridOf = (parent, title, opts) => {
    const p = panel(parent, title, { chart: false, hint: opts.hint, wide: true });
    const box = el('div', 'memory-maps');
    p.body.append(box);
    return { p, g: mapGrid(box, { maxCell: 320, minCell: 60, ...opts.grid }) };
  };
  const lstm = gridOf(pics, 'memory.lstm_gates', { hint: 'memory.gates_hint', grid: { columns: 3 } });
  const gru = gridOf(pics, 'memory.gru_gates', { hint: 'memory.gates_hint', grid: { columns: 3 } });
  const states = gridOf(dash.grid, 'memory.states', { hint: 'memory.states_hint', grid: { colormap: 'diverging', range: [-1, 1], columns: 2 } });

  // -- the sweep -----------------------------------------------------------------------------
  const pSweep = panel(dash.grid, 'memory.sweep', { hint: 'memory.sweep_hint' });
  pSweep.el.classList.add('memory-sweep');
  const sweepNote = el('p', 'memory-sweep-note');
  pSweep.el.insertBefore(sweepNote, pSweep.chart);
  // The hint's step count and the note, from the latest frame's sweep (none yet: the params'),
  // written at once so the panel never shows "{steps}" before the first frame or after relabel.
  const sweepTexts = (m) => {
    const sw = m && m.sweep;
    setText(pSweep.el.querySelector('.hint'), t('memory.sweep_hint', { steps: sw ? sw.steps : ctx.params().sweep_steps }));
    setText(sweepNote, sw ? t('memory.now_delay', { n: m.delay }) : t('memory.sweep_off'));
  };
  sweepTexts(null);

  let last = null;
  let held = {}; // arm -> its latest held-out accuracy (evaluated every few steps)
  let sweepAt = 0;
  let sweepTimer = null;

  const pct = (v) => `${fmt(100 * v, 3)}%`;
  const armIndex = (label) => last.meta.arms.findIndex((a) => a.label === label);

  function drawExample() {
    const m = last.meta;
    setText(exHint, t('memory.example_hint', { n: m.delay, chance: pct(m.chance) }));
    strip.replaceChildren(...m.tokens.map((tok, i) => {
      const c = el('span', i === 0 ? 'memory-tok first' : i === m.tokens.length - 1 ? 'memory-tok cue' : 'memory-tok', tok);
      c.title = `${t('memory.step')} ${i}`;
      return c;
    }));
    // One example's answer says little on its own: beside it, the arm's held-out accuracy
    // against chance, and a right answer from an arm near chance reads as luck, not memory.
    answers.replaceChildren(...m.arms.map((a, i) => {
      const acc = held[i];
      const nearChance = acc !== undefined && acc < m.chance + Math.max(0.1, 0.5 * m.chance);
      const verdict = !a.right ? 'wrong' : nearChance || acc === undefined ? 'lucky' : 'right';
      const row = el('span', `memory-answer ${{ right: 'ok', wrong: 'bad', lucky: 'luck' }[verdict]}`);
      row.dataset.arm = a.label;
      row.dataset.verdict = verdict;
      row.dataset.acc = acc === undefined ? '' : String(acc);
      const sw = el('i', 'memory-swatch');
      sw.style.background = COLORS[i % COLORS.length];
      const accNote = acc === undefined ? '' : ` · ${t('memory.arm_acc', { acc: pct(acc), chance: pct(m.chance) })}`;
      row.append(sw, el('b', null, a.label), ` ${t('memory.answers')}: ${m.symbols[a.answer]} ${t('memory.answer_note', { x: `${t(`memory.${verdict}`)}${accNote}` })}`);
      return row;
    }));
    const rows = [];
    const iL = armIndex('LSTM'), iG = armIndex('GRU'), iR = armIndex('RNN');
    const hold = (i, key) => {
      const h = m.arms[i] && m.arms[i].hold;
      if (!h) return;
      const p = el('p', 'memory-hold');
      p.dataset.arm = m.arms[i].label;
      p.textContent = t(key, { unit: h.unit, min: fmt(h.min_along_delay, 3), kept: fmt(h.kept, 3), mean: fmt(h.mean_along_delay, 3) });
      rows.push(p);
    };
    hold(iL, 'memory.hold_lstm');
    hold(iG, 'memory.hold_gru');
    const acc = held[iR];
    if (iR >= 0 && acc !== undefined) {
      const p = el('p', 'memory-hold');
      p.dataset.arm = 'RNN';
      p.textContent = t('memory.hold_rnn', { acc: pct(acc), chance: pct(m.chance) });
      rows.push(p);
    }
    holds.replaceChildren(...rows);
  }

  function drawMaps() {
    const m = last.meta;
    const tokens = m.tokens;
    const stepLabels = tokens.map((tok, i) => `${i} ${tok}`);
    const common = { rowTitle: t('memory.unit'), colTitle: t('memory.step'), colLabels: stepLabels };
    const gatesOf = (label, grid) => {
      const i = armIndex(label);
      const g = i >= 0 ? last.tensors[`arm.${i}.gates`] : null;
      if (!g) return;
      const [G, H, T] = g.shape;
      const names = g.labels || [];
      const list = [];
      for (let k = 0; k < G; k++) list.push({ data: g.data, offset: k * H * T, rows: H, cols: T, group: 0 });
      const mapLabels = names.map((n) => t(`memory.${n}`));
      grid.draw(list, { ...common, mapLabels, title: (_, k) => `${label} · ${mapLabels[k]}` });
    };
    gatesOf('LSTM', lstm.g);
    gatesOf('GRU', gru.g);
    const list = [], mapLabels = [];
    m.arms.forEach((a, i) => {
      const s = last.tensors[`arm.${i}.states`];
      if (!s) return;
      const [S, H, T] = s.shape;
      for (let k = 0; k < S; k++) {
        list.push({ data: s.data, offset: k * H * T, rows: H, cols: T, group: 0 });
        mapLabels.push(`${a.label} · ${t(`memory.${(s.labels || [])[k] || 'hidden'}`)}`);
      }
    });
    if (list.length) states.g.draw(list, { ...common, mapLabels, title: (_, k) => mapLabels[k] });
  }

  function drawSweep() {
    if (!last) return;
    const now = performance.now();
    if (now - sweepAt < SWEEP_MS) { // a plotly redraw a few times a second is plenty
      clearTimeout(sweepTimer);
      sweepTimer = setTimeout(drawSweep, SWEEP_MS);
      return;
    }
    sweepAt = now;
    const m = last.meta;
    const sw = m.sweep;
    sweepTexts(m);
    const delays = sw ? sw.delays : [];
    const data = m.arms.map((a, i) => ({
      type: 'scatter', mode: 'lines+markers', name: a.label,
      x: delays, y: sw ? sw.acc[i] : [],
      line: { color: COLORS[i % COLORS.length], width: 2 }, marker: { size: 8 },
      hovertemplate: `${a.label}: N=%{x}, %{y:.1%}<extra></extra>`,
    }));
    if (delays.length) data.push({ type: 'scatter', mode: 'lines', name: t('memory.chance'), x: [delays[0], delays[delays.length - 1]], y: [m.chance, m.chance], line: { color: '#999', dash: 'dot', width: 1 }, hoverinfo: 'skip' });
    const layout = baseLayout({
      xaxis: { title: { text: t('memory.delay_axis') } },
      yaxis: { title: { text: t('memory.acc_axis') }, range: [0, 1.05], tickformat: '.0%' },
    });
    whenPlotly((P) => P.react(pSweep.chart, data, layout, CONFIG));
  }

  function draw() {
    if (!last) return;
    drawExample();
    drawMaps();
    drawSweep();
  }

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.tokens) return;
      last = f;
      draw();
      root.dataset.step = String(f.step);
    },
    scalars(rows) {
      dash.onScalars(rows);
      for (const r of rows) for (const [k, v] of Object.entries(r.values)) {
        const hit = /^arm\.(\d+)\.held_acc$/.exec(k);
        if (hit) held[Number(hit[1])] = v;
      }
    },
    reset() { dash.reset(); held = {}; },
    relabel() {
      dash.relabel();
      for (const p of [pEx, lstm.p, gru.p, states.p, pSweep]) p.relabel();
      for (const g of [lstm.g, gru.g, states.g]) g.relabel();
      sweepTexts(last && last.meta);
      sweepAt = 0;
      draw();
    },
  };
}
