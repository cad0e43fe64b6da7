// View of `embeddings`: a character model's learned vectors (PCA to 2-D, labelled, moving as
// it trains; click one to see its nearest neighbours), the checks behind the page's
// sentences, its loss and group cosines; then ids that invent an order, one-hot rows that
// are all orthogonal, the (sweet, tech) table the learner edits with its cosines, and
// one-hot × E picking a row. Every number is the server's; the page only draws.
import { addStrings, t } from '../core/i18n.js';
import { setText, el } from '../core/dom.js';
import { dashboard } from '../components/dashboard.js';
import { matrixView, toRows } from '../components/matrixView.js';
import { panel } from '../components/panel.js';
import { baseLayout, COLORS, CONFIG, fmt, Plotly } from '../components/plot.js';

const L = 'embeddings';
const k = (s) => `${L}.${s}`;
addStrings({
  en: {
    [k('scatter')]: 'The model’s character vectors, PCA to 2-D',
    [k('scatter_note')]: '{n} characters seen at least {c} times · rows of a {d}-wide embedding ({p} parameters in all) · the two axes hold {v}% of their spread · step {s}',
    [k('scatter_hint')]: 'Press play: a small Transformer learns to guess the next character of the story, and these points are rows of its embedding matrix. Click a character to see its nearest neighbours.',
    [k('near')]: 'Nearest to “{c}” by cosine',
    [k('findings')]: 'What the model learned (checked on its weights)',
    [k('held')]: 'After {steps} steps, {group} {members} sit together: mean cosine {w} with each other, {a} with {others}.',
    [k('not_yet')]: 'Not together (yet): {group} {members} have mean cosine {w} with each other and {a} with {others}; together once the first beats the second by {m}.',
    [k('start')]: 'At the random start: {w} and {a}.',
    [k('nobody')]: 'Nobody told the model which characters are marks or vowels: it was only trained to guess the next character.',
    [k('g_marks')]: 'the sentence marks',
    [k('o_marks')]: 'the letters and characters',
    [k('g_vowels')]: 'the vowels',
    [k('o_vowels')]: 'the other lower-case letters',
    [k('loss')]: 'Loss (next character, nats)',
    [k('train_loss')]: 'training loss',
    [k('groups')]: 'Mean cosine inside a group and to the rest',
    [k('marks_within')]: 'marks with marks',
    [k('marks_across')]: 'marks with letters',
    [k('vowels_within')]: 'vowels with vowels',
    [k('vowels_across')]: 'vowels with consonants',
    [k('ids')]: 'Ids invent an order',
    [k('ids_list')]: 'Number the words in the order they were listed: {list}.',
    [k('ids_sum')]: 'As numbers, id({a}) + id({b}) = {x} + {y} = {s} = id({c}).',
    [k('ids_far')]: 'And {a} is “nearer” {b} (|{x} − {y}| = {d1}) than {c} (|{x} − {z}| = {d2}).',
    [k('ids_hint')]: 'Nothing about apples, bananas or pears says so: a network fed these ids would read an order and sums that are not there.',
    [k('onehot')]: 'One-hot: every pair orthogonal',
    [k('onehot_m')]: 'one-hot rows',
    [k('gram')]: 'Gram matrix (all dot products)',
    [k('cos')]: 'cosines',
    [k('onehot_hint')]: 'Each word gets its own dimension. The Gram matrix is the identity: every pair’s cosine is 0 and every pair is {d} apart. No order any more, but no similarity either: 苹果 is as unlike 梨 as anything.',
    [k('table')]: 'A 2-D table (sweet, tech) and its cosines',
    [k('table_m')]: 'E (click a number to edit)',
    [k('table_hint')]: 'Two features chosen by hand: how sweet, how tech (小米 is the phone maker). cos(a, b) = a·b / (|a| |b|), computed on the server for every pair; edit a number (−1 … 1) and watch them change.',
    [k('table_cos')]: 'cosine of every pair',
    [k('lookup')]: 'One-hot × E is a row lookup',
    [k('lookup_pick')]: 'Pick a word:',
    [k('lookup_onehot')]: 'one-hot',
    [k('lookup_row')]: 'one-hot · E',
    [k('lookup_hint')]: 'Multiplying a one-hot row by E adds up one row of E times 1 and the others times 0: max |one-hot · E − E[{w}]| = {e}. An embedding layer skips the product and reads the row.',
    [k('dim_sweet')]: 'sweet',
    [k('dim_tech')]: 'tech',
    [k('gloss.苹果')]: 'apple',
    [k('gloss.香蕉')]: 'banana',
    [k('gloss.梨')]: 'pear',
    [k('gloss.小米')]: 'Xiaomi',
    [k('gloss.橙子')]: 'orange',
  },
  zh: {
    [k('scatter')]: '模型学到的字向量（PCA 投到二维）',
    [k('scatter_note')]: '出现至少 {c} 次的 {n} 个字符 · {d} 维词向量表的行（模型共 {p} 个参数）· 两个轴占它们分布的 {v}% · 第 {s} 步',
    [k('scatter_hint')]: '按“播放”：一个小 Transformer 学着猜故事里的下一个字，这些点就是它词向量矩阵的行。点一个字，看它最近的邻居。',
    [k('near')]: '按余弦离“{c}”最近的字',
    [k('findings')]: '模型学到了什么（在它的权重上检验）',
    [k('held')]: '训练 {steps} 步后，{group} {members} 靠在了一起：彼此的平均余弦是 {w}，和{others}的是 {a}。',
    [k('not_yet')]: '还没有靠在一起：{group} {members} 彼此的平均余弦是 {w}，和{others}的是 {a}；前者比后者大 {m} 以上才算靠在一起。',
    [k('start')]: '随机初始化时：{w} 和 {a}。',
    [k('nobody')]: '没有人告诉模型哪些是标点、哪些是元音：它只被训练去猜下一个字。',
    [k('g_marks')]: '标点符号',
    [k('o_marks')]: '文字（汉字和字母）',
    [k('g_vowels')]: '元音',
    [k('o_vowels')]: '其他小写字母',
    [k('loss')]: '损失（猜下一个字，nats）',
    [k('train_loss')]: '训练损失',
    [k('groups')]: '组内的平均余弦，和组外的',
    [k('marks_within')]: '标点和标点',
    [k('marks_across')]: '标点和文字',
    [k('vowels_within')]: '元音和元音',
    [k('vowels_across')]: '元音和辅音',
    [k('ids')]: '编号会凭空造出顺序',
    [k('ids_list')]: '按列出的先后给词编号：{list}。',
    [k('ids_sum')]: '当成数字，id({a}) + id({b}) = {x} + {y} = {s} = id({c})。',
    [k('ids_far')]: '而且{a}离{b}“更近”（|{x} − {y}| = {d1}），离{c}更远（|{x} − {z}| = {d2}）。',
    [k('ids_hint')]: '苹果、香蕉、梨本身没有这种关系：把编号直接喂给网络，它会读出根本不存在的顺序和加法。',
    [k('onehot')]: '独热编码：每两个词都正交',
    [k('onehot_m')]: '独热行',
    [k('gram')]: 'Gram 矩阵（两两点积）',
    [k('cos')]: '余弦',
    [k('onehot_hint')]: '每个词占一个维度。Gram 矩阵是单位矩阵：每两个词的余弦都是 0，两两距离都是 {d}。顺序没有了，可相似也没有了：苹果和梨跟任何两个词一样不像。',
    [k('table')]: '二维词表（甜, 科技）和它的余弦',
    [k('table_m')]: 'E（点一个数可以改）',
    [k('table_hint')]: '人工挑的两个特征：有多甜、有多科技（小米是手机厂商）。cos(a, b) = a·b / (|a| |b|)，每一对都由服务器算；改一个数（−1 … 1），看余弦怎么变。',
    [k('table_cos')]: '两两余弦',
    [k('lookup')]: '独热 × E 就是查表取一行',
    [k('lookup_pick')]: '选一个词：',
    [k('lookup_onehot')]: '独热',
    [k('lookup_row')]: '独热 · E',
    [k('lookup_hint')]: '独热行乘 E，就是把 E 的一行乘 1、其他行乘 0 再相加：max |独热 · E − E[{w}]| = {e}。嵌入层省掉乘法，直接读这一行。',
    [k('dim_sweet')]: '甜',
    [k('dim_tech')]: '科技',
    [k('gloss.苹果')]: '',
    [k('gloss.香蕉')]: '',
    [k('gloss.梨')]: '',
    [k('gloss.小米')]: '',
    [k('gloss.橙子')]: '',
  },
});

export const stylesheet = '/css/labs/embeddings.css';

const SCATTER_MS = 250; // a plotly redraw of ~70 labelled points costs ~10 ms: 4 a second
const GREY = '#8a8f98';
const LABEL_AT = ['top center', 'top left', 'top center', 'bottom right'];

const fix = (v) => v.toFixed(3).replace('-', '−'); // cosines: three decimals, never 8.7e-4


export default function mount(root, ctx) {
  const { store, params, setParams } = ctx;
  root.innerHTML = '';
  const view = el('div', 'emb-view');
  root.append(view);
  const canEdit = () => store.get('role') === 'driver';
  const word = (w) => { const g = t(k(`gloss.${w}`)); return g && g !== k(`gloss.${w}`) ? `${w} ${g}` : w; };

  let groups = []; // the groups the current text has (marks, vowels)
  const dash = dashboard(view, ctx, {
    charts: [
      { title: k('loss'), keys: [{ key: 'loss', name: k('train_loss') }], logY: true },
      {
        title: k('groups'),
        kept: false,
        keys: () => groups.flatMap((g, i) => [
          { key: `${g}_within`, name: k(`${g}_within`), color: COLORS[(2 * i + 1) % COLORS.length] },
          { key: `${g}_across`, name: k(`${g}_across`), color: COLORS[(2 * i + 1) % COLORS.length], dash: 'dot' },
        ]),
      },
    ],
    waterfall: false,
    readout: false,
  });
  const pics = dash.picturesEl;
  pics.classList.add('emb-pictures');
  const after = dash.grid;

  // -- the learned scatter and its neighbours ------------------------------------------------
  const pScatter = panel(pics, k('scatter'), { hint: k('scatter_hint') });
  pScatter.el.classList.add('emb-scatter');
  const note = el('p', 'emb-note');
  pScatter.el.insertBefore(note, pScatter.chart);
  const side = el('div', 'emb-side');
  pics.append(side);
  const pNear = panel(side, null, { chart: false });
  const nearTitle = el('h3');
  pNear.el.prepend(nearTitle);
  const nearList = el('ol', 'emb-near');
  pNear.body.append(nearList);
  const pFind = panel(side, k('findings'), { chart: false });
  const findList = el('div', 'emb-findings');
  const nobody = el('p', 'hint');
  pFind.body.append(findList, nobody);

  // -- the static pictures ---------------------------------------------------------------------
  const pIds = panel(after, k('ids'), { chart: false, hint: k('ids_hint') });
  const idsText = el('div', 'emb-ids');
  pIds.body.append(idsText);

  const pHot = panel(after, k('onehot'), { chart: false });
  const hotRow = el('div', 'emb-mats');
  pHot.body.append(hotRow);
  const mvHot = matrixView(hotRow, { digits: 0 });
  const mvGram = matrixView(hotRow, { digits: 0 });
  const mvHotCos = matrixView(hotRow, { digits: 0 });
  const hotHint = el('p', 'hint');
  pHot.el.append(hotHint);

  const pTable = panel(after, k('table'), { hint: k('table_hint') });
  pTable.el.classList.add('emb-wide');
  const tableRow = el('div', 'emb-mats');
  pTable.el.insertBefore(tableRow, pTable.chart);
  const mvTable = matrixView(tableRow, {
    editable: true,
    digits: 2,
    min: -1,
    max: 1,
    onEdit: (i, j, v) => {
      if (!canEdit()) return;
      const table = (params().table || []).map((r) => [...r]);
      if (!table[i]) return;
      table[i][j] = Math.round(v * 1000) / 1000;
      setParams({ table });
    },
  });
  const mvTableCos = matrixView(tableRow, { digits: 3 });
  pTable.chart.classList.add('emb-arrows');

  const pLook = panel(after, k('lookup'), { chart: false });
  pLook.el.classList.add('emb-wide');
  const pick = el('div', 'emb-pick');
  const pickLabel = el('span');
  const pickButtons = el('span', 'emb-pick-buttons');
  pick.append(pickLabel, pickButtons);
  const lookRow = el('div', 'emb-mats emb-product');
  pLook.body.append(pick, lookRow);
  const mvOne = matrixView(lookRow, { digits: 0 });
  lookRow.append(el('span', 'emb-op', '×'));
  const mvE = matrixView(lookRow, { digits: 2 });
  lookRow.append(el('span', 'emb-op', '='));
  const mvRow = matrixView(lookRow, { digits: 2 });
  const lookHint = el('p', 'hint');
  pLook.el.append(lookHint);

  let last = null;
  let range = 0; // the scatter's half-width: grows at once, shrinks slowly (no jitter)
  let drawnAt = 0;
  let timer = null;

  pScatter.chart.setAttribute('data-testid', 'emb-scatter');
  let clickBound = false;
  function bindClick() {
    if (clickBound || !pScatter.chart.on) return;
    clickBound = true;
    pScatter.chart.on('plotly_click', (ev) => {
      const pt = ev && ev.points && ev.points[0];
      if (!pt || !last || !canEdit()) return;
      const c = pt.customdata;
      if (typeof c === 'string' && c !== last.meta.learned.probe) setParams({ probe: c });
    });
  }

  function drawScatter() {
    if (!last) return;
    const now = performance.now();
    if (now - drawnAt < SCATTER_MS) {
      clearTimeout(timer);
      timer = setTimeout(drawScatter, SCATTER_MS - (now - drawnAt));
      return;
    }
    drawnAt = now;
    const m = last.meta.learned;
    const P = last.tensors.points;
    const n = P.shape[0];
    const xs = [], ys = [];
    let big = 0;
    for (let i = 0; i < n; i++) {
      xs.push(P.data[2 * i]); ys.push(P.data[2 * i + 1]);
      big = Math.max(big, Math.abs(P.data[2 * i]), Math.abs(P.data[2 * i + 1]));
    }
    range = Math.max(big * 1.15, range * 0.97) || 1;
    const members = new Map();
    for (const c of m.checks) for (const ch of c.members) members.set(ch, c.group);
    const near = new Set(m.neighbours);
    const colour = m.chars.map((c) => (c === m.probe ? COLORS[4] : near.has(c) ? COLORS[0]
      : members.get(c) === 'marks' ? COLORS[1] : members.get(c) === 'vowels' ? COLORS[2] : GREY));
    const size = m.chars.map((c) => (c === m.probe ? 20 : near.has(c) ? 16 : 14));
    const data = [{
      type: 'scatter', mode: 'markers+text', x: xs, y: ys,
      text: P.labels, customdata: m.chars, textposition: 'top center',
      textfont: { size, color: colour },
      marker: { size: 5, color: colour },
      hovertemplate: '%{text}<extra></extra>',
    }];
    const layout = baseLayout({
      margin: { l: 36, r: 8, t: 8, b: 30 },
      xaxis: { range: [-range, range], zeroline: true, title: { text: 'PC 1' } },
      yaxis: { range: [-range, range], zeroline: true, title: { text: 'PC 2' } },
      hovermode: 'closest',
      dragmode: false,
    });
    Plotly.react(pScatter.chart, data, layout, CONFIG);
    bindClick();
  }

  function drawLearned(f) {
    const m = f.meta.learned;
    const v = Math.round(100 * (m.explained[0] + m.explained[1]));
    setText(note, t(k('scatter_note'), { n: m.chars.length, c: m.min_count, d: m.d_model, p: m.params.toLocaleString('en-US'), v, s: m.steps }));
    const labelOf = (c) => f.tensors.points.labels[m.chars.indexOf(c)] ?? c;
    setText(nearTitle, t(k('near'), { c: labelOf(m.probe) }));
    const nb = f.tensors.neighbours;
    nearList.replaceChildren(...nb.labels.map((c, i) => {
      const li = el('li');
      li.append(el('b', 'emb-char', c), el('span', 'emb-cos', fmt(nb.data[i], 3)));
      return li;
    }));
    findList.replaceChildren(...m.checks.map((c) => el('p', `emb-finding ${c.holds ? 'ok' : 'wait'}`, t(k(c.holds ? 'held' : 'not_yet'), {
      steps: m.steps, group: t(k(`g_${c.group}`)), members: c.members.join(' '), others: t(k(`o_${c.group}`)),
      w: fix(c.within), a: fix(c.across), m: fmt(m.margin, 2),
    }) + (m.steps ? ` ${t(k('start'), { w: fix(c.start.within), a: fix(c.start.across) })}` : ''))));
    setText(nobody, t(k('nobody')));
    const now = m.checks.map((c) => c.group);
    if (now.join() !== groups.join()) { groups = now; dash.refresh(); }
    drawScatter();
  }

  let staticKey = null;
  function drawStatic(f) {
    const T = f.tensors;
    const m = f.meta;
    const key = JSON.stringify([Array.from(T.table.data), m.word, document.documentElement.lang, canEdit()]);
    if (key === staticKey) return; // it changes only when the learner edits or picks
    staticKey = key;
    const [a, b, c] = m.id_words;
    const ids = Array.from(T.ids.data);
    const d = m.id_distance;
    idsText.replaceChildren(
      el('p', null, t(k('ids_list'), { list: m.id_words.map((w, i) => `${word(w)} = ${ids[i]}`).join(', ') })),
      el('p', 'emb-sum', t(k('ids_sum'), { a, b, c: m.id_sum_word, x: ids[0], y: ids[1], s: m.id_sum })),
      el('p', null, t(k('ids_far'), { a, b, c, x: ids[0], y: ids[1], z: ids[2], d1: d[0][1], d2: d[0][2] })),
    );
    const dims = ['0', '1', '2'];
    mvHot.setName(t(k('onehot_m')));
    mvHot.draw({ rows: T.onehot, rowLabels: m.id_words, colLabels: dims });
    mvGram.setName(t(k('gram')));
    mvGram.draw({ rows: T.onehot_gram, rowLabels: m.id_words, colLabels: m.id_words });
    mvHotCos.setName(t(k('cos')));
    mvHotCos.draw({ rows: T.onehot_cos, rowLabels: m.id_words, colLabels: m.id_words });
    setText(hotHint, t(k('onehot_hint'), { d: fmt(m.onehot_distance, 4) }));

    const dimNames = m.table_dims.map((x) => t(k(`dim_${x}`)));
    const words = m.table_words;
    mvTable.setName(t(k('table_m')));
    mvTable.draw({ rows: T.table, rowLabels: words.map(word), colLabels: dimNames, editable: canEdit(), scale: 1 });
    mvTableCos.setName(t(k('table_cos')));
    mvTableCos.draw({ rows: T.table_cos, rowLabels: words, colLabels: words, scale: 1 });
    const E = toRows(T.table);
    // Arrows from the origin (annotations draw text at their tail: none there); the words
    // at the heads, 梨 and 橙子 on opposite sides (their default rows nearly coincide).
    const colours = words.map((_, i) => COLORS[i % COLORS.length]);
    const annotations = E.map((r, i) => ({
      x: r[0], y: r[1], ax: 0, ay: 0, axref: 'x', ayref: 'y', xref: 'x', yref: 'y', text: '',
      showarrow: true, arrowhead: 2, arrowwidth: 2, arrowcolor: colours[i],
    }));
    Plotly.react(pTable.chart, [{
      type: 'scatter', mode: 'markers+text', x: E.map((r) => r[0]), y: E.map((r) => r[1]),
      text: words, textposition: words.map((_, i) => LABEL_AT[i % LABEL_AT.length]),
      textfont: { size: 14, color: colours }, marker: { size: 6, color: colours },
      hovertemplate: '%{text} (%{x}, %{y})<extra></extra>',
    }], baseLayout({
      margin: { l: 44, r: 12, t: 8, b: 38 },
      xaxis: { range: [-1.15, 1.15], zeroline: true, title: { text: dimNames[0] } },
      yaxis: { range: [-1.15, 1.15], zeroline: true, title: { text: dimNames[1] }, scaleanchor: 'x' },
      annotations, dragmode: false,
    }), CONFIG);

    setText(pickLabel, t(k('lookup_pick')));
    pickButtons.replaceChildren(...words.map((w, i) => {
      const btn = el('button', 'emb-word', w);
      btn.type = 'button';
      btn.dataset.word = String(i);
      btn.setAttribute('aria-pressed', String(i === m.word));
      btn.disabled = !canEdit();
      btn.onclick = () => { if (i !== m.word) setParams({ word: i }); };
      return btn;
    }));
    mvOne.setName(t(k('lookup_onehot')));
    mvOne.draw({ rows: [Array.from(T.lookup_onehot.data)], rowLabels: [words[m.word]], colLabels: words });
    mvE.setName('E');
    mvE.draw({ rows: T.table, rowLabels: words, colLabels: dimNames, focusRow: m.word, scale: 1 });
    mvRow.setName(t(k('lookup_row')));
    mvRow.draw({ rows: [Array.from(T.lookup_row.data)], rowLabels: [words[m.word]], colLabels: dimNames, scale: 1 });
    setText(lookHint, t(k('lookup_hint'), { w: m.word, e: fmt(m.lookup_error, 3) }));
  }

  return {
    frame(f) {
      if (!f.meta || !f.meta.learned || !f.tensors.points) return;
      last = f;
      root.dataset.step = String(f.step);
      dash.onFrame(f);
      drawLearned(f);
      drawStatic(f);
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); range = 0; },
    relabel() {
      for (const p of [pScatter, pNear, pFind, pIds, pHot, pTable, pLook]) p.relabel();
      dash.relabel();
      staticKey = null;
      if (last) { drawLearned(last); drawStatic(last); }
    },
  };
}
