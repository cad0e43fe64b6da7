// View of `norms`: one small decoder with only its norm changed (placement ×4, LayerNorm vs
// RMSNorm, or QK-norm off vs on), trained side by side. The dashboard draws the loss,
// held-out accuracy, the largest attention logit, the attention entropy and the lr by arm,
// and the gradient waterfall (its step-0 column is the gradient at init); this view adds,
// per layer and arm, the gradient norm at init beside the last step's, the largest logit with
// QK-norm's cap from the learned gains, and the entropy under its uniform ceiling, and sets
// the text's own logged logit beside them as a cited fact. Every number comes from the server.
import { addStrings, t } from '../core/i18n.js';
import { add, el, setText } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, reactIfChanged, throttleCost, whenPlotly } from '../components/plot.js';
import { tryBar } from '../components/tryBar.js';

export const stylesheet = '/css/labs/norms.css';

addStrings({
  en: {
    'norms.loss': 'Training loss by arm (same batches, same seed)',
    'norms.acc': 'Held-out exact answers',
    'norms.seq_acc': 'exact',
    'norms.logit': 'Largest attention logit (any layer, held-out batch)',
    'norms.max_logit': 'largest logit',
    'norms.entropy': 'Attention entropy (mean over layers and heads, nats)',
    'norms.entropy_key': 'entropy',
    'norms.lr': 'Learning rate (the warm-up ramp)',
    'norms.lr_key': 'lr',
    'norms.story': 'The same decoder with only its norm changed, on the same batches. Read off this run:',
    'norms.story_wait': 'the first evaluation (step {n}) has not come yet.',
    'norms.story_solved': '{arm} ≥ 90 % exact from step {n}',
    'norms.story_left': '{arm} left chance at step {n} ({v} exact at step {m})',
    'norms.story_chance': '{arm} still at chance (exact {v} at step {m})',
    'norms.story_warm': 'Does a 100-step warm-up to the same learning rate change when post-norm leaves chance? Try it below.',
    'norms.story_init': 'The waterfall’s first column is the gradient at init: post-norm’s blocks above the first get a small fraction of pre-norm’s.',
    'norms.story_olmo2': 'The OLMo-2 arm runs here without QK-norm (the QK-norm box is off): real OLMo-2 also uses QK-norm, so this arm is its placement alone, not its recipe.',
    'norms.try': 'Try:',
    'norms.try_cold': 'Four placements, no warm-up',
    'norms.try_warm': 'Four placements, 100-step warm-up',
    'norms.try_norm': 'Post-norm: LayerNorm vs RMSNorm',
    'norms.try_qk': 'OLMo-2 placement: QK-norm off vs on',
    'norms.grad': 'Gradient norm per stage: at init (dashed) and at the last step',
    'norms.grad_hint': 'At init: one fixed held-out batch through the untrained arm, autograd’s gradient, each stage’s parameters as one vector. Now: the last training step’s, the same numbers the waterfall shows.',
    'norms.init': 'init',
    'norms.now': 'now',
    'norms.layer_logit': 'Largest attention logit per layer, at the last evaluation',
    'norms.layer_logit_hint': 'Max over heads and visible query–key pairs of q·k/√d_head on a held-out batch. Dotted: the cap QK-norm allows, √d_head·max|g_q|·max|g_k| (plus the biases), from the arm’s learned gains — gains that grow let the logit grow. Measured with the held-out accuracy (the markers on its chart).',
    'norms.cap': 'QK-norm cap',
    'norms.layer_entropy': 'Attention entropy per layer, at the last evaluation',
    'norms.layer_entropy_hint': 'Each query’s −Σ p log p over the keys it sees, averaged over heads and queries. The grey line is uniform attention (query t sees t + 1 keys): a layer sitting there has not learned where to look.',
    'norms.uniform': 'uniform',
    'norms.layer': 'layer',
    'norms.cited': 'Beside the toy: the text’s own model, with QK-norm, still logged a largest attention logit of {v} in {stack} layer {layer}. A measurement of that model, not of this toy.',
    'norms.encoder': 'encoder',
    'norms.now_row': '{arm} · largest logit',
    'norms.at_eval': '(step\u00a0{n})', // no-break spaces: the note wraps as one piece
    'norms.warmup_now': 'Warm-up',
    'norms.warmup_steps': '{n} steps',
    'norms.warmup_none': 'none',
  },
  zh: {
    'norms.loss': '各变体的训练损失（同样的批、同样的随机种子）',
    'norms.acc': '留出集整串答对的比例',
    'norms.seq_acc': '整串',
    'norms.logit': '最大的注意力 logit（任一层，留出批）',
    'norms.max_logit': '最大 logit',
    'norms.entropy': '注意力熵（各层各头的平均，单位 nat）',
    'norms.entropy_key': '熵',
    'norms.lr': '学习率（预热的斜坡）',
    'norms.lr_key': '学习率',
    'norms.story': '同一个解码器只改归一化，在同样的批上训练。以下从本次训练读出：',
    'norms.story_wait': '第一次评估（第 {n} 步）还没到。',
    'norms.story_solved': '{arm} 从第 {n} 步起 ≥ 90% 完全正确',
    'norms.story_left': '{arm} 在第 {n} 步离开随机猜测的水平（第 {m} 步完全正确 {v}）',
    'norms.story_chance': '{arm} 仍在随机猜测的水平（第 {m} 步完全正确 {v}）',
    'norms.story_warm': '用 100 步预热到同一个学习率，后置归一化离开随机猜测的水平会不会更早？在下面试试。',
    'norms.story_init': '瀑布图的第一列是初始化时的梯度：后置归一化第一层以上的各块，只得到前置归一化的一小部分。',
    'norms.story_olmo2': '这里的 OLMo-2 变体没有 QK-norm（QK-norm 选项是关的）：真实的 OLMo-2 还用了 QK-norm，所以这个变体只是它的归一化位置，不是它的完整配方。',
    'norms.try': '试试：',
    'norms.try_cold': '四种位置，不预热',
    'norms.try_warm': '四种位置，预热 100 步',
    'norms.try_norm': '后置：LayerNorm 对 RMSNorm',
    'norms.try_qk': 'OLMo-2 位置：QK-norm 关 / 开',
    'norms.grad': '各阶段的梯度范数：初始化时（虚线）和最近一步',
    'norms.grad_hint': '初始化时：一个固定的留出批送进未训练的模型，autograd 算出的梯度，每个阶段的参数合成一个向量。最近一步：训练最后一步的梯度，和瀑布图里的数一样。',
    'norms.init': '初始化',
    'norms.now': '现在',
    'norms.layer_logit': '每层最大的注意力 logit（最近一次评估）',
    'norms.layer_logit_hint': '在一个留出批上，所有头、所有能看见的查询–键对里 q·k/√d_head 的最大值。点线：QK-norm 允许的上限 √d_head·max|g_q|·max|g_k|（加上偏置），由这个变体学到的增益算出——增益变大，logit 也能变大。和留出准确率一起测（它图上的那些点）。',
    'norms.cap': 'QK-norm 上限',
    'norms.layer_entropy': '每层的注意力熵（最近一次评估）',
    'norms.layer_entropy_hint': '每个查询在它能看见的键上的 −Σ p log p，对头和查询取平均。灰线是均匀注意力（第 t 个查询看见 t + 1 个键）：停在那里的层还没学会看哪里。',
    'norms.uniform': '均匀',
    'norms.layer': '层',
    'norms.cited': '对照：原文的模型用了 QK-norm，{stack}第 {layer} 层的最大注意力 logit 仍达 {v}（那个模型的测量值，不是这个玩具模型的）。',
    'norms.encoder': '编码器',
    'norms.now_row': '{arm} · 最大 logit',
    'norms.at_eval': '（第\u00a0{n}\u00a0步）',
    'norms.warmup_now': '预热',
    'norms.warmup_steps': '{n} 步',
    'norms.warmup_none': '无',
  },
});

const SCENARIOS = {
  cold: { compare: 'placement', warmup: 0, norm: 'layernorm', qk_norm: false },
  warm: { compare: 'placement', warmup: 100, norm: 'layernorm', qk_norm: false },
  norm: { compare: 'norm', placement: 'post', warmup: 0 },
  qk: { compare: 'qk_norm', placement: 'olmo2', norm: 'layernorm', warmup: 0 },
};

export default function mount(root, ctx) {
  const dash = dashboard(root, ctx, {
    className: 'norms-view',
    charts: [
      { title: 'norms.loss', keys: [{ key: 'loss', name: 'dash.train_loss' }], logY: true },
      { title: 'norms.acc', keys: [{ key: 'seq_acc', name: 'norms.seq_acc', markers: true }], kept: false, yaxis: { range: [-0.05, 1.05] } },
      { title: 'norms.logit', keys: [{ key: 'max_logit', name: 'norms.max_logit', markers: true }], logY: 'positive' },
      { title: 'norms.entropy', keys: [{ key: 'entropy', name: 'norms.entropy_key', markers: true }] },
      { title: 'norms.lr', keys: [{ key: 'lr', name: 'norms.lr_key' }], kept: false, logY: true },
    ],
    readout: (f, arms) => {
      // Measured at evaluations only: between them, the latest one's, with its step.
      const out = arms.map((a, i) => {
        const now = f.scalars[`arm.${i}.max_logit`];
        const last = f.meta && Array.isArray(f.meta.arms) ? f.meta.arms[i] : null;
        const at = now === undefined && last && Array.isArray(last.max_logit) && last.max_logit.length ? last : null;
        const value = now ?? (at ? Math.max(...at.max_logit) : '–');
        return { label: t('norms.now_row', { arm: a.label }), value, note: at ? t('norms.at_eval', { n: at.stats_step }) : '' };
      });
      const w = f.meta && f.meta.warmup;
      out.push({ label: t('norms.warmup_now'), value: w ? t('norms.warmup_steps', { n: w }) : t('norms.warmup_none') });
      return out;
    },
  });
  const pics = dash.picturesEl;
  const story = add(pics, 'p', 'norms-story');
  const tries = tryBar(pics, ctx, { prefix: 'norms', scenarios: SCENARIOS });
  const after = dash.grid;

  const pGrad = panel(after, 'norms.grad', { hint: 'norms.grad_hint', wide: true });
  const pLogit = panel(after, 'norms.layer_logit', { hint: 'norms.layer_logit_hint', wide: true });
  const cited = el('p', 'norms-cited');
  pLogit.el.append(cited);
  const pEnt = panel(after, 'norms.layer_entropy', { hint: 'norms.layer_entropy_hint', wide: true });
  const panels = [pGrad, pLogit, pEnt];

  let last = null;

  const layerNames = (n) => Array.from({ length: n }, (_, i) => `${t('norms.layer')} ${i}`);
  const legend = { orientation: 'h', x: 0, xanchor: 'left', y: 1.02, yanchor: 'bottom', font: { size: 11 } };
  const layout = (yTitle, logY, xTitle) => baseLayout({
    showlegend: true, legend,
    xaxis: { type: 'category', title: { text: xTitle } },
    yaxis: { title: { text: yTitle }, type: logY ? 'log' : 'linear', exponentformat: 'power' },
  });
  const color = (i) => COLORS[i % COLORS.length];

  function drawGrad(P, arms) {
    const data = [];
    arms.forEach((a, i) => {
      data.push({ type: 'scatter', mode: 'lines+markers', x: a.stages, y: a.init_grad, name: `${a.label} · ${t('norms.init')}`, line: { color: color(i), dash: 'dash', width: 1.5 }, marker: { size: 5 } });
      if (a.grad_now && a.grad_now.length) data.push({ type: 'scatter', mode: 'lines+markers', x: a.stages, y: a.grad_now, name: `${a.label} · ${t('norms.now')}`, line: { color: color(i), width: 2 }, marker: { size: 6 } });
    });
    reactIfChanged(P, pGrad.chart, data, layout('‖g‖', true, ''));
  }

  function drawLogit(P, m) {
    const data = [];
    m.arms.forEach((a, i) => {
      const x = layerNames(a.max_logit.length);
      data.push({ type: 'scatter', mode: 'lines+markers', x, y: a.max_logit, name: a.label, line: { color: color(i), width: 2 } });
      if (a.qk_cap.some((c) => c !== null)) data.push({ type: 'scatter', mode: 'lines', x, y: a.qk_cap, name: `${a.label} · ${t('norms.cap')}`, line: { color: color(i), dash: 'dot', width: 1.5 } });
    });
    // Early on a layer's largest q·k can be negative: a log axis would drop it.
    const positive = m.arms.every((a) => a.max_logit.every((v) => v > 0));
    reactIfChanged(P, pLogit.chart, data, layout('q·k/√d', positive, '')); // new every evaluation
    const c = m.cited;
    setText(cited, t('norms.cited', { v: c.max_logit, layer: c.layer, stack: t(`norms.${c.stack}`) }));
  }

  function drawEntropy(P, m) {
    const n = m.arms[0].entropy.length;
    const x = layerNames(n);
    const data = m.arms.map((a, i) => ({ type: 'scatter', mode: 'lines+markers', x, y: a.entropy, name: a.label, line: { color: color(i), width: 2 } }));
    data.push({ type: 'scatter', mode: 'lines', x, y: x.map(() => m.uniform_entropy), name: t('norms.uniform'), line: { color: '#8a8f98', dash: 'dot', width: 1.5 } });
    reactIfChanged(P, pEnt.chart, data, layout('nats', false, ''));
  }

  // Three plotly charts of up to 8 traces, redrawn within the page's shared budget for
  // costly redraws (plot.js): as often as it allows, never stacked into one long task.
  const draw = throttleCost(() => {
    if (!last) return;
    const m = last.meta;
    whenPlotly((P) => { drawGrad(P, m.arms); drawLogit(P, m); drawEntropy(P, m); });
    root.dataset.step = String(last.step);
    root.dataset.arms = m.arms.map((a) => a.label).join(',');
  });

  // The story is read off this run's evaluations (held-out exact rate per arm), never assumed:
  // an arm "left chance" at its first evaluation with ≥ 5 % exact (chance is ~10⁻⁶).
  let acc = {}; // arm index -> { left, solved, step, v }
  const LEFT = 0.05;
  const SOLVED = 0.9;
  function readAcc(rows) {
    for (const r of rows) {
      for (const [k, v] of Object.entries(r.values)) {
        const mm = /^arm\.(\d+)\.seq_acc$/.exec(k);
        if (!mm || !Number.isFinite(v)) continue;
        const a = (acc[mm[1]] ??= { left: null, solved: null, step: 0, v: 0 });
        if (r.step < a.step) { // a rewind: what came after it is no longer this run's
          if (a.left > r.step) a.left = null;
          if (a.solved > r.step) a.solved = null;
        }
        a.step = r.step;
        a.v = v;
        if (v >= LEFT && a.left === null) a.left = r.step;
        if (v >= SOLVED && a.solved === null) a.solved = r.step;
      }
    }
  }
  function storyText() {
    const m = last && last.meta;
    const arms = m && Array.isArray(m.arms) ? m.arms : [];
    const parts = [];
    arms.forEach((arm, i) => {
      const a = acc[i];
      if (!a || !a.step) return;
      const pct = `${Math.round(a.v * 100)} %`;
      if (a.solved !== null && a.v >= SOLVED) parts.push(t('norms.story_solved', { arm: arm.label, n: a.solved }));
      else if (a.left !== null) parts.push(t('norms.story_left', { arm: arm.label, n: a.left, v: pct, m: a.step }));
      else parts.push(t('norms.story_chance', { arm: arm.label, v: pct, m: a.step }));
    });
    const out = [t('norms.story'), parts.length ? `${parts.join('; ')}.` : t('norms.story_wait', { n: (m && m.eval_every) || 20 })];
    const labels = arms.map((a) => a.placement);
    if (labels.includes('pre') && labels.includes('post')) out.push(t('norms.story_warm'), t('norms.story_init'));
    if (arms.some((a) => a.placement === 'olmo2' && !a.qk_norm)) out.push(t('norms.story_olmo2'));
    return out.join(' ');
  }

  function drawStory() {
    setText(story, storyText());
  }

  function relabelOwn() {
    drawStory();
    tries.draw();
  }
  relabelOwn();
  ctx.store.on('role', () => tries.draw());

  return {
    frame(f) {
      dash.onFrame(f);
      if (!f.meta || !Array.isArray(f.meta.arms) || !f.meta.arms[0] || !f.meta.arms[0].max_logit) return;
      last = f;
      draw();
      drawStory();
    },
    scalars(rows) { dash.onScalars(rows); readAcc(rows); drawStory(); },
    params() { tries.draw(); },
    reset() { dash.reset(); acc = {}; drawStory(); },
    relabel() {
      dash.relabel();
      for (const p of panels) p.relabel();
      relabelOwn();
      draw();
    },
  };
}
