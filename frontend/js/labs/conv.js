// View of `conv`: seven convolution worked examples, one at a time (step, or click a chip).
// The learner paints the image (drag: paint 1, start on a 1: erase), clicks kernel cells to
// type numbers or picks a preset; the server recomputes with torch and the page redraws.
// The sliding window is only geometry (which cells a window covers): every number shown,
// the outputs, pools, sizes, fields and differences, arrives from the server.
import { addStrings } from '../core/i18n.js';
import { matrixView, toRows } from '../components/matrixView.js';
import { el, add } from '../core/dom.js';
import { cells, num, windowKeys } from './conv/cells.js';

export const stylesheet = '/css/labs/conv.css';

const STAGES = ['correlate', 'flip', 'avg_pool', 'max_pool', 'out_size', 'receptive', 'one_by_one'];
const PRESETS = ['example', 'edge', 'blur', 'sharpen'];

addStrings({
  en: {
    'conv.correlate': 'Slide a kernel', 'conv.flip': 'Flipped kernel', 'conv.avg_pool': 'Average pool', 'conv.max_pool': 'Max pool',
    'conv.out_size': 'Output size', 'conv.receptive': 'Receptive field', 'conv.one_by_one': '1×1 conv',
    'conv.correlate_text': 'torch’s conv2d slides the kernel and sums products: cross-correlation, no flip. Columns 0–1 are 1, kernel [[1, 0], [0, −1]]: every output row is [0, 1, 0, 0] — the vertical edge. Paint on the image, click kernel cells: the output follows.',
    'conv.flip_text': 'The textbook convolution flips the kernel on both axes first. Same image, flipped kernel: every row becomes [0, −1, 0, 0]. Learned kernels make the flip irrelevant: a network just learns the flipped weights.',
    'conv.avg_text': '2×2 average pooling, stride 2: each window’s mean.',
    'conv.max_text': '2×2 max pooling keeps each window’s largest value (outlined: where it came from).',
    'conv.size_text': 'Output side = ⌊(n + 2p − k) / s⌋ + 1. Move the sliders; torch’s own conv2d says what it returns.',
    'conv.rf_text': 'How much one output pixel depends on each input pixel (autograd’s gradient, all-ones kernels): two stacked 3×3 layers see a 5×5 patch, like one 5×5 layer, with fewer weights (and a ReLU between them in a real network).',
    'conv.one_text': 'A 1×1 conv mixes channels at each pixel: an nn.Linear with the same weights, applied to every pixel’s channel vector, gives the same numbers.',
    'conv.image': 'Image', 'conv.kernel': 'Kernel', 'conv.flipped': 'Kernel flipped', 'conv.output': 'Output (cross-correlation)', 'conv.convolved': 'Output (convolution)',
    'conv.paint_hint': 'Drag to paint 1s; start on a 1 to erase.', 'conv.kernel_hint': 'Click a cell to type a number.',
    'conv.stride': 'stride', 'conv.padding': 'padding', 'conv.example': 'The 5×5 example', 'conv.blank': 'Blank 10×10', 'conv.clear': 'Clear',
    'conv.preset_example': '[[1, 0], [0, −1]]', 'conv.preset_edge': 'Edge (Sobel)', 'conv.preset_blur': 'Blur', 'conv.preset_sharpen': 'Sharpen',
    'conv.window': 'out[{i}, {j}] = {terms} = {v}', 'conv.animate': 'Slide', 'conv.stop': 'Stop',
    'conv.refused': 'torch refuses: {error}', 'conv.input': 'Input', 'conv.pooled': 'Pooled',
    'conv.size_formula': '⌊({n} + 2·{p} − {k}) / {s}⌋ + 1 = {v}', 'conv.torch_says': 'torch’s conv2d returns {side} × {side}', 'conv.torch_refuses': 'torch refuses: {error}',
    'conv.padded': 'padded input (n + 2p = {m})', 'conv.two': 'Two 3×3 layers', 'conv.one': 'One 5×5 layer',
    'conv.weights': '{seen}×{seen} seen with {two} weights (2 × 3 × 3) instead of {one} (5 × 5)',
    'conv.x': 'x, channel {c}', 'conv.conv_out': '1×1 conv, out {c}', 'conv.lin_out': 'Linear per pixel, out {c}',
    'conv.diff': 'largest |conv − linear| = {d}; parameters {a} and {b}; shapes {i} → {o}', 'conv.next': 'Press Step for the next example.',
  },
  zh: {
    'conv.correlate': '滑动卷积核', 'conv.flip': '翻转卷积核', 'conv.avg_pool': '平均池化', 'conv.max_pool': '最大池化',
    'conv.out_size': '输出尺寸', 'conv.receptive': '感受野', 'conv.one_by_one': '1×1 卷积',
    'conv.correlate_text': 'torch 的 conv2d 让卷积核滑过图像、逐格相乘再求和：这是互相关，不翻转。第 0–1 列是 1，卷积核 [[1, 0], [0, −1]]：每一行输出都是 [0, 1, 0, 0]——竖直边缘。在图上画、点卷积核的格子，输出跟着变。',
    'conv.flip_text': '教科书上的卷积先把卷积核上下左右翻转。同一张图、翻转后的核：每行变成 [0, −1, 0, 0]。卷积核是学出来的，翻不翻无所谓：网络直接学到翻转后的权重。',
    'conv.avg_text': '2×2 平均池化，步长 2：每个窗口取平均。',
    'conv.max_text': '2×2 最大池化保留每个窗口里最大的值（描边的格子是它的来处）。',
    'conv.size_text': '输出边长 = ⌊(n + 2p − k) / s⌋ + 1。拖动滑块；torch 的 conv2d 亲口回答它输出多大。',
    'conv.rf_text': '一个输出像素对每个输入像素的依赖（autograd 求的梯度，卷积核全为 1）：两层 3×3 叠起来看到 5×5，和一层 5×5 一样，权重却更少（真实网络里两层之间还有 ReLU）。',
    'conv.one_text': '1×1 卷积在每个像素上混合通道：用同样权重的 nn.Linear 作用在每个像素的通道向量上，得到同样的数。',
    'conv.image': '图像', 'conv.kernel': '卷积核', 'conv.flipped': '翻转后的卷积核', 'conv.output': '输出（互相关）', 'conv.convolved': '输出（卷积）',
    'conv.paint_hint': '拖动画 1；从 1 开始拖就是擦除。', 'conv.kernel_hint': '点格子输入数字。',
    'conv.stride': '步长', 'conv.padding': '填充', 'conv.example': '5×5 例子', 'conv.blank': '空白 10×10', 'conv.clear': '清空',
    'conv.preset_example': '[[1, 0], [0, −1]]', 'conv.preset_edge': '边缘（Sobel）', 'conv.preset_blur': '模糊', 'conv.preset_sharpen': '锐化',
    'conv.window': 'out[{i}, {j}] = {terms} = {v}', 'conv.animate': '滑动', 'conv.stop': '停',
    'conv.refused': 'torch 拒绝：{error}', 'conv.input': '输入', 'conv.pooled': '池化后',
    'conv.size_formula': '⌊({n} + 2·{p} − {k}) / {s}⌋ + 1 = {v}', 'conv.torch_says': 'torch 的 conv2d 输出 {side} × {side}', 'conv.torch_refuses': 'torch 拒绝：{error}',
    'conv.padded': '填充后的输入（n + 2p = {m}）', 'conv.two': '两层 3×3', 'conv.one': '一层 5×5',
    'conv.weights': '看到 {seen}×{seen}，只用 {two} 个权重（2 × 3 × 3），而不是 {one} 个（5 × 5）',
    'conv.x': 'x，第 {c} 通道', 'conv.conv_out': '1×1 卷积，输出 {c}', 'conv.lin_out': '逐像素线性层，输出 {c}',
    'conv.diff': '|卷积 − 线性层| 最大 = {d}；参数 {a} 和 {b}；形状 {i} → {o}', 'conv.next': '按“单步”看下一个例子。',
  },
});

export default function mount(root, ctx) {
  const { t, store, setParams } = ctx;
  root.innerHTML = '';
  const view = add(root, 'div', 'conv-view');
  const ribbon = add(view, 'div', 'conv-ribbon');
  const chips = STAGES.map((s, i) => {
    const b = add(ribbon, 'button', '');
    b.type = 'button';
    b.dataset.stage = s;
    b.onclick = () => { if (store.get('role') === 'driver') ctx.infer({ action: 'goto', stage: i }); };
    return b;
  });
  const title = add(view, 'h2', 'conv-title');
  const text = add(view, 'p', 'conv-text');
  const card = add(view, 'div', 'conv-card');
  const driver = () => store.get('role') === 'driver';
  let last = null;
  let hoverAt = null; // [i, j] of the output cell the pointer is on
  let slide = { on: true, k: 0, timer: null };

  // -- the playground (stages correlate and flip) -------------------------------------------
  const play = el('div', 'conv-play');
  const imgCol = add(play, 'div', 'conv-col');
  const imgCap = add(imgCol, 'div', 'conv-cap');
  let paintValue = 1, painted = null;
  const img = cells(imgCol, {
    cls: 'conv-image',
    paint: (i, j, phase) => {
      if (!driver()) return;
      if (phase === 'end') { if (painted) setParams({ image: painted }); painted = null; return; }
      if (phase === 'start') { painted = img.rows.map((r) => r.slice()); paintValue = painted[i][j] >= 0.5 ? 0 : 1; }
      if (!painted || painted[i][j] === paintValue) return;
      painted[i][j] = paintValue;
      img.draw(painted, { big: 1 });
    },
  });
  const imgHint = add(imgCol, 'p', 'hint');
  const imgTools = add(imgCol, 'div', 'conv-tools');
  const exampleBtn = add(imgTools, 'button', '');
  const blankBtn = add(imgTools, 'button', '');
  const clearBtn = add(imgTools, 'button', '');
  for (const b of [exampleBtn, blankBtn, clearBtn]) b.type = 'button';
  exampleBtn.onclick = () => setParams({ image: Array.from({ length: 5 }, () => [1, 1, 0, 0, 0]), kernel: last.meta.presets.example, stride: 1, padding: 0 });
  blankBtn.onclick = () => setParams({ image: Array.from({ length: 10 }, () => new Array(10).fill(0)) });
  clearBtn.onclick = () => setParams({ image: img.rows.map((r) => r.map(() => 0)) });

  const kCol = add(play, 'div', 'conv-col');
  const kernel = matrixView(kCol, { name: '', editable: true, digits: 3, onEdit: (i, j, v) => {
    const k = toRows(last.tensors.kernel).map((r) => r.slice());
    k[i][j] = v;
    setParams({ kernel: k });
  } });
  const kHint = add(kCol, 'p', 'hint');
  const presetBox = add(kCol, 'div', 'conv-tools');
  const presetBtns = PRESETS.map((p) => { const b = add(presetBox, 'button', ''); b.type = 'button'; b.dataset.preset = p; b.onclick = () => setParams({ kernel: last.meta.presets[p] }); return b; });
  const flipView = matrixView(kCol, { name: '' });
  const knobs = add(kCol, 'div', 'conv-tools');
  const selects = ['stride', 'padding'].map((name) => {
    const lab = add(knobs, 'label', '');
    const span = add(lab, 'span', '');
    const sel = add(lab, 'select', '');
    for (const v of name === 'stride' ? [1, 2, 3] : [0, 1, 2]) { const o = add(sel, 'option', '', String(v)); o.value = String(v); }
    sel.onchange = () => setParams({ [name]: Number(sel.value) });
    return { name, span, sel };
  });

  const outCol = add(play, 'div', 'conv-col');
  const outCap = add(outCol, 'div', 'conv-cap');
  const out = cells(outCol, { cls: 'conv-output', hover: (i, j) => { hoverAt = i === null ? null : [i, j]; drawPlay(); } });
  const convCap = add(outCol, 'div', 'conv-cap');
  const convOut = cells(outCol, { cls: 'conv-convolved' });
  const windowLine = add(play, 'p', 'conv-line');
  const slideBtn = add(imgTools, 'button', 'conv-slide');
  slideBtn.type = 'button';
  slideBtn.onclick = () => { slide.on = !slide.on; relabelStatic(); };

  function windowOf(i, j) {
    const m = last.meta.play;
    const k = toRows(last.tensors.kernel);
    return { top: i * m.stride - m.padding, left: j * m.stride - m.padding, kr: k.length, kc: k[0].length, k };
  }

  function drawPlay() {
    if (!last) return;
    const tn = last.tensors, m = last.meta.play, stage = STAGES[last.meta.stage];
    const image = toRows(tn.image);
    const flip = stage === 'flip';
    let at = hoverAt;
    const o = tn.output ? toRows(tn.output) : null;
    if (!at && o && slide.on) { const n = o.length * o[0].length; const s = slide.k % n; at = [Math.floor(s / o[0].length), s % o[0].length]; }
    let win = null, line = '';
    if (at && o && at[0] < o.length && at[1] < o[0].length) {
      const w = windowOf(at[0], at[1]);
      win = windowKeys(w.top, w.left, w.kr, w.kc);
      const kk = flip ? toRows(tn.kernel_flipped) : w.k;
      const terms = [];
      for (let a = 0; a < w.kr; a++) for (let b = 0; b < w.kc; b++) {
        const r = w.top + a, c = w.left + b;
        const x = r >= 0 && c >= 0 && r < image.length && c < image[0].length ? image[r][c] : 0;
        const kv = num(kk[a][b]);
        terms.push(`${num(x)}·${kv.startsWith('−') ? `(${kv})` : kv}`);
      }
      const v = flip ? toRows(tn.convolved)[at[0]][at[1]] : o[at[0]][at[1]];
      line = t('conv.window', { i: at[0], j: at[1], terms: terms.join(' + '), v: num(v) });
    }
    if (!painted) img.draw(image, { win, pad: m.padding, big: 1 });
    kernel.draw({ rows: tn.kernel, editable: driver() });
    flipView.el.hidden = !flip;
    if (flip) flipView.draw({ rows: tn.kernel_flipped });
    const mark = at ? new Set([`${at[0]},${at[1]}`]) : null;
    out.el.hidden = !o || flip;
    outCap.hidden = flip;
    if (o) out.draw(o, { mark: flip ? null : mark });
    convOut.el.hidden = convCap.hidden = !flip || !tn.convolved;
    if (flip && tn.convolved) convOut.draw(toRows(tn.convolved), { mark });
    windowLine.textContent = m.error ? t('conv.refused', { error: m.error }) : line;
    windowLine.classList.toggle('warn', !!m.error);
    for (const s of selects) { s.sel.value = String(m[s.name]); s.sel.disabled = !driver(); }
    for (const b of [...presetBtns, exampleBtn, blankBtn, clearBtn]) b.disabled = !driver();
  }

  // -- pooling --------------------------------------------------------------------------------
  const poolBox = el('div', 'conv-play');
  const poolIn = add(poolBox, 'div', 'conv-col');
  const poolInCap = add(poolIn, 'div', 'conv-cap');
  let poolHover = null;
  const poolInCells = cells(poolIn, { cls: 'conv-pool-in', hover: (i, j) => { poolHover = i === null ? null : [Math.floor(i / 2), Math.floor(j / 2)]; drawPool(); } });
  const poolOut = add(poolBox, 'div', 'conv-col');
  const poolOutCap = add(poolOut, 'div', 'conv-cap');
  const poolOutCells = cells(poolOut, { cls: 'conv-pool-out', hover: (i, j) => { poolHover = i === null ? null : [i, j]; drawPool(); } });

  function drawPool() {
    const tn = last.tensors, isMax = STAGES[last.meta.stage] === 'max_pool';
    const input = toRows(isMax ? tn.max_in : tn.avg_in), output = toRows(isMax ? tn.max_out : tn.avg_out);
    let mark = null;
    if (isMax) { mark = new Set(); Array.from(tn.max_arg.data).forEach((f) => mark.add(`${Math.floor(f / 4)},${f % 4}`)); }
    const win = poolHover ? windowKeys(poolHover[0] * 2, poolHover[1] * 2, 2, 2) : null;
    poolInCells.draw(input, { mark, win });
    poolOutCells.draw(output, { mark: poolHover ? new Set([`${poolHover[0]},${poolHover[1]}`]) : null, big: Math.max(...input.flat()) });
  }

  // -- output size ----------------------------------------------------------------------------
  const sizeBox = el('div', 'conv-size');
  const sliders = add(sizeBox, 'div', 'conv-sliders');
  const SL = { n: [1, 16], k: [1, 7], p: [0, 3], s: [1, 4] };
  const sizeInputs = Object.entries(SL).map(([name, [lo, hi]]) => {
    const lab = add(sliders, 'label', '');
    add(lab, 'span', '', name);
    const inp = add(lab, 'input', '');
    inp.type = 'range'; inp.min = String(lo); inp.max = String(hi); inp.step = '1';
    inp.dataset.knob = name;
    const o = add(lab, 'output', '');
    inp.oninput = () => { o.textContent = inp.value; };
    inp.onchange = () => setParams({ [name]: Number(inp.value) });
    return { name, inp, o };
  });
  const formula = add(sizeBox, 'p', 'conv-formula');
  const torchSays = add(sizeBox, 'p', 'conv-line');
  const padCap = add(sizeBox, 'div', 'conv-cap');
  const sizeRow = add(sizeBox, 'div', 'conv-play');
  const sizeGrid = cells(sizeRow, { cls: 'conv-size-grid' });
  const sizeOut = cells(sizeRow, { cls: 'conv-size-out' });

  function drawSize() {
    const z = last.meta.size;
    for (const s of sizeInputs) { if (document.activeElement !== s.inp) s.inp.value = String(z[s.name]); s.o.textContent = String(z[s.name]); s.inp.disabled = !driver(); }
    formula.textContent = t('conv.size_formula', { n: z.n, p: z.p, k: z.k, s: z.s, v: z.formula });
    torchSays.textContent = z.error ? t('conv.torch_refuses', { error: z.error }) : t('conv.torch_says', { side: z.torch });
    torchSays.classList.toggle('warn', !!z.error);
    const m = z.n + 2 * z.p;
    padCap.textContent = t('conv.padded', { m });
    const zeros = Array.from({ length: z.n }, () => new Array(z.n).fill(1));
    const starts = z.starts;
    let win = null, mark = null;
    if (starts.length) {
      const total = starts.length * starts.length, q = slide.k % total;
      const i = Math.floor(q / starts.length), j = q % starts.length;
      win = windowKeys(starts[i] - z.p, starts[j] - z.p, z.k, z.k);
      mark = new Set([`${i},${j}`]);
    }
    sizeGrid.draw(zeros, { win, pad: z.p, big: 4 });
    sizeOut.el.hidden = !starts.length;
    if (starts.length) sizeOut.draw(Array.from({ length: starts.length }, () => new Array(starts.length).fill(0)), { mark });
  }

  // -- receptive field, 1×1 -------------------------------------------------------------------
  const rfBox = el('div', 'conv-play');
  const rfTwoCol = add(rfBox, 'div', 'conv-col');
  const rfTwoCap = add(rfTwoCol, 'div', 'conv-cap');
  const rfTwo = cells(rfTwoCol, { cls: 'conv-rf' });
  const rfOneCol = add(rfBox, 'div', 'conv-col');
  const rfOneCap = add(rfOneCol, 'div', 'conv-cap');
  const rfOne = cells(rfOneCol, { cls: 'conv-rf' });
  const rfLine = add(rfBox, 'p', 'conv-formula');
  const oneBox = el('div', 'conv-play');
  const oneLine = el('p', 'conv-formula');

  function drawRf() {
    const tn = last.tensors, r = last.meta.rf;
    const mark = (m) => { const s = new Set(); toRows(m).forEach((row, i) => row.forEach((v, j) => { if (v > 0) s.add(`${i},${j}`); })); return s; };
    rfTwo.draw(toRows(tn.rf_two), { win: mark(tn.rf_two) });
    rfOne.draw(toRows(tn.rf_one), { win: mark(tn.rf_one) });
    rfLine.textContent = t('conv.weights', { seen: r.seen, two: r.two_3x3, one: r.one_5x5 });
  }

  function channels(tensor) {
    const [c, h, w] = tensor.shape;
    return Array.from({ length: c }, (_, k) => Array.from({ length: h }, (_, i) => Array.from(tensor.data.subarray(k * h * w + i * w, k * h * w + (i + 1) * w))));
  }
  function drawOne() {
    const tn = last.tensors, o = last.meta.one;
    oneBox.replaceChildren();
    const groups = [['conv.x', tn.one_x], ['conv.conv_out', tn.one_conv], ['conv.lin_out', tn.one_linear]];
    for (const [key, tensor] of groups) {
      const grp = add(oneBox, 'div', 'conv-group');
      channels(tensor).forEach((rows, c) => { const col = add(grp, 'div', 'conv-col'); add(col, 'div', 'conv-cap', t(key, { c })); cells(col, { cls: 'conv-small' }).draw(rows); });
    }
    oneLine.textContent = t('conv.diff', { d: o.max_abs_diff.toExponential(2), a: o.conv_params, b: o.linear_params, i: `[${o.shape_in.join(', ')}]`, o: `[${o.shape_out.join(', ')}]` });
    oneBox.append(oneLine);
  }

  // -- the stage shown ------------------------------------------------------------------------
  const TEXT = { correlate: 'conv.correlate_text', flip: 'conv.flip_text', avg_pool: 'conv.avg_text', max_pool: 'conv.max_text', out_size: 'conv.size_text', receptive: 'conv.rf_text', one_by_one: 'conv.one_text' };
  const BODY = { correlate: play, flip: play, avg_pool: poolBox, max_pool: poolBox, out_size: sizeBox, receptive: rfBox, one_by_one: oneBox };

  function relabelStatic() {
    chips.forEach((b, i) => { b.textContent = `${i + 1}. ${t(`conv.${STAGES[i]}`)}`; });
    imgCap.textContent = t('conv.image');
    imgHint.textContent = t('conv.paint_hint');
    kernel.setName(t('conv.kernel'));
    flipView.setName(t('conv.flipped'));
    kHint.textContent = t('conv.kernel_hint');
    presetBtns.forEach((b) => { b.textContent = t(`conv.preset_${b.dataset.preset}`); });
    for (const s of selects) s.span.textContent = t(`conv.${s.name}`);
    exampleBtn.textContent = t('conv.example');
    blankBtn.textContent = t('conv.blank');
    clearBtn.textContent = t('conv.clear');
    slideBtn.textContent = t(slide.on ? 'conv.stop' : 'conv.animate');
    outCap.textContent = t('conv.output');
    convCap.textContent = t('conv.convolved');
    poolInCap.textContent = t('conv.input');
    poolOutCap.textContent = t('conv.pooled');
    rfTwoCap.textContent = t('conv.two');
    rfOneCap.textContent = t('conv.one');
  }

  function render() {
    if (!last) return;
    const stage = STAGES[last.meta.stage];
    view.dataset.stage = stage;
    chips.forEach((b, i) => { b.dataset.state = i === last.meta.stage ? 'current' : i < last.meta.stage ? 'done' : 'next'; b.disabled = !driver(); });
    title.textContent = `${last.meta.stage + 1} / ${STAGES.length} · ${t(`conv.${stage}`)}`;
    text.textContent = t(TEXT[stage]) + (last.meta.stage < STAGES.length - 1 ? ` ${t('conv.next')}` : '');
    if (card.firstChild !== BODY[stage]) card.replaceChildren(BODY[stage]);
    if (stage === 'correlate' || stage === 'flip') drawPlay();
    else if (stage === 'avg_pool' || stage === 'max_pool') drawPool();
    else if (stage === 'out_size') drawSize();
    else if (stage === 'receptive') drawRf();
    else drawOne();
  }

  // The window slides on its own (once a second) until the pointer rests on an output cell.
  slide.timer = setInterval(() => {
    if (!last || !slide.on || hoverAt || document.hidden) return;
    const stage = STAGES[last.meta.stage];
    if (stage !== 'correlate' && stage !== 'flip' && stage !== 'out_size') return;
    slide.k += 1;
    if (stage === 'out_size') drawSize(); else drawPlay();
  }, 900);

  relabelStatic();
  const show = (f) => { if (!f.meta || !f.meta.stages) return; last = f; render(); };
  return {
    frame: show,
    infer: show,
    reset() { slide.k = 0; },
    relabel() { relabelStatic(); render(); },
  };
}
