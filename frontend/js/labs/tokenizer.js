// View of `tokenizer`: the token count of the text falling as BPE merges are learned (one a
// step), the merges newest first, a sample sentence cut four ways with ids, the tokenizers
// side by side, the most frequent pieces, and ids becoming input and labels. The paste box
// counts bytes and shows the server's answer beside it. Everything shown is the server's.
import { addStrings } from '../core/i18n.js';
import { bars } from '../components/bars.js';
import { byteCounter } from '../components/byteCounter.js';
import { lineChart } from '../components/lineChart.js';
import { panel } from '../components/panel.js';
import { readout } from '../components/readout.js';

addStrings({
  en: {
    'tokenizer.curve': 'BPE: tokens in the text and vocabulary size, merge by merge',
    'tokenizer.tokens': 'tokens in the text',
    'tokenizer.vocab': 'vocabulary size',
    'tokenizer.merges': 'Merges learned, newest first',
    'tokenizer.no_merges': 'No merges yet: every character is its own token. Press Step or Play.',
    'tokenizer.finished': 'No adjacent pair occurs twice any more: BPE has nothing left to merge.',
    'tokenizer.times': '×{n}',
    'tokenizer.sample': 'The sample sentence, cut four ways (colour = piece, number = id)',
    'tokenizer.compare': 'Tokenizers side by side on the whole text',
    'tokenizer.kind': 'tokenizer',
    'tokenizer.vocab_col': 'vocab',
    'tokenizer.tokens_col': 'tokens',
    'tokenizer.cpt_col': 'chars/token',
    'tokenizer.char': 'characters',
    'tokenizer.word': 'words',
    'tokenizer.bpe': 'BPE (ours, {n} merges)',
    'tokenizer.sp': 'sentencepiece BPE',
    'tokenizer.sp_note': 'asked {r}, trained {v}',
    'tokenizer.top': 'Most frequent BPE pieces in the text now',
    'tokenizer.io': 'A sequence becomes input and labels (next-token prediction)',
    'tokenizer.io_ids': 'ids (BPE) of the sample',
    'tokenizer.io_input': 'input ids[:-1]',
    'tokenizer.io_labels': 'labels ids[1:]',
    'tokenizer.io_hint': 'Column by column: at each position the model reads the input id and is graded on the label below it, the id that comes next.',
    'tokenizer.io_example': 'The example of the course’s lecture notes (chapter 6)',
    'tokenizer.numbers': 'The text',
    'tokenizer.chars': 'characters',
    'tokenizer.bytes': 'bytes (UTF-8)',
    'tokenizer.merges_done': 'merges',
    'tokenizer.cpt': 'characters per BPE token',
    'tokenizer.paste': 'Paste your own text',
    'tokenizer.paste_use': 'Use this text',
    'tokenizer.paste_empty': 'Paste at least two different characters.',
    'tokenizer.paste_sent': 'Sent; training the tokenizers on it…',
    'tokenizer.paste_ok': 'Using your text ({n} characters).',
    'tokenizer.paste_placeholder': 'Paste any text here (Chinese, English, code…)',
    'tokenizer.server_said': 'The server refused it: {m}',
    'tokenizer.paste_missing': 'No pasted text here (a link does not carry it), so this is the Chinese text. Paste yours again.',
  },
  zh: {
    'tokenizer.curve': 'BPE：文本的 token 数与词表大小，一次合并一步',
    'tokenizer.tokens': '文本的 token 数',
    'tokenizer.vocab': '词表大小',
    'tokenizer.merges': '学到的合并，最新的在上',
    'tokenizer.no_merges': '还没有合并：每个字都是一个 token。按“单步”或“播放”。',
    'tokenizer.finished': '已经没有出现两次以上的相邻片段对：BPE 没有可合并的了。',
    'tokenizer.times': '×{n}',
    'tokenizer.sample': '示例句子的四种切法（颜色 = 片段，数字 = 编号）',
    'tokenizer.compare': '几种分词器在整段文本上的对比',
    'tokenizer.kind': '分词器',
    'tokenizer.vocab_col': '词表',
    'tokenizer.tokens_col': 'token 数',
    'tokenizer.cpt_col': '字/token',
    'tokenizer.char': '按字',
    'tokenizer.word': '按词',
    'tokenizer.bpe': 'BPE（我们的，{n} 次合并）',
    'tokenizer.sp': 'sentencepiece BPE',
    'tokenizer.sp_note': '要求 {r}，实际 {v}',
    'tokenizer.top': '现在文本里最常见的 BPE 片段',
    'tokenizer.io': '一个序列变成输入和标签（预测下一个 token）',
    'tokenizer.io_ids': '示例句子的编号（BPE）',
    'tokenizer.io_input': '输入 ids[:-1]',
    'tokenizer.io_labels': '标签 ids[1:]',
    'tokenizer.io_hint': '一列一列看：每个位置上模型读上面的输入编号，按它下面的标签（紧接着的下一个编号）打分。',
    'tokenizer.io_example': '课程讲义（第 6 章）中的例子',
    'tokenizer.numbers': '这段文本',
    'tokenizer.chars': '字符数',
    'tokenizer.bytes': '字节数（UTF-8）',
    'tokenizer.merges_done': '合并次数',
    'tokenizer.cpt': '每个 BPE token 的字数',
    'tokenizer.paste': '粘贴你自己的文本',
    'tokenizer.paste_use': '用这段文本',
    'tokenizer.paste_empty': '请至少粘贴两个不同的字符。',
    'tokenizer.paste_sent': '已发送，正在用它训练分词器……',
    'tokenizer.paste_ok': '正在使用你的文本（{n} 个字符）。',
    'tokenizer.paste_placeholder': '在这里粘贴任意文本（中文、英文、代码……）',
    'tokenizer.server_said': '服务器拒绝了：{m}',
    'tokenizer.paste_missing': '这里没有粘贴的文本（链接不会带上它），所以显示的是中文文本。请再粘贴一次。',
  },
});

export const stylesheet = '/css/labs/tokenizer.css'; // the shell loads it

/** Make whitespace visible in a piece: space ␣, newline ⏎, tab ⇥. */
const show = (p) => p.replaceAll(' ', '␣').replaceAll('\n', '⏎').replaceAll('\t', '⇥');

/** A stable light colour per id (golden-angle hues), so equal pieces share a colour. */
const hue = (id) => `hsl(${Math.round((id * 137.508) % 360)}, 70%, 86%)`;

export default function mount(root, { t, store, setParams, client }) {
  root.innerHTML = '';
  const grid = document.createElement('div');
  grid.className = 'view-grid tok-view';
  root.append(grid);

  const pCurve = panel(grid, 'tokenizer.curve');
  const pMerges = panel(grid, 'tokenizer.merges', { chart: false });
  const pCompare = panel(grid, 'tokenizer.compare', { chart: false });
  const pSample = panel(grid, 'tokenizer.sample', { chart: false });
  const pNum = panel(grid, 'tokenizer.numbers', { chart: false });
  const pIo = panel(grid, 'tokenizer.io', { chart: false, hint: 'tokenizer.io_hint' });
  const pTop = panel(grid, 'tokenizer.top');
  const pPaste = panel(grid, 'tokenizer.paste', { chart: false });
  pSample.el.classList.add('tok-wide');
  pIo.el.classList.add('tok-wide');

  const curve = lineChart(pCurve.chart, {
    traces: [{ key: 'tokens', name: t('tokenizer.tokens') }, { key: 'vocab', name: t('tokenizer.vocab') }],
    xTitle: t('tokenizer.merges_done'),
  });
  const mergeList = document.createElement('ol');
  mergeList.className = 'tok-merges';
  const mergeNote = document.createElement('p');
  mergeNote.className = 'hint';
  pMerges.body.append(mergeNote, mergeList);
  const sampleBox = document.createElement('div');
  sampleBox.className = 'tok-cuts';
  pSample.body.append(sampleBox);
  const table = document.createElement('table');
  table.className = 'tok-compare';
  pCompare.body.append(table);
  const topBars = bars(pTop.chart, { color: '#1a9e77' });
  const ioBox = document.createElement('div');
  ioBox.className = 'tok-io';
  pIo.body.append(ioBox);
  const nums = readout(pNum.body);

  // The paste box: bytes counted here, the limit and the verdict from the server.
  const area = document.createElement('textarea');
  area.className = 'tok-paste';
  area.rows = 6;
  area.id = 'tok-paste';
  const pasteRow = document.createElement('div');
  pasteRow.className = 'tok-paste-row';
  const useBtn = document.createElement('button');
  useBtn.type = 'button';
  useBtn.className = 'primary';
  // Its bytes counted as they are typed by the byte counter the gpt lab's paste box uses;
  // the limit is the server's (max_pasted_bytes).
  const counter = byteCounter(area, { className: 'tok-paste-count' });
  const count = counter.el;
  const verdict = document.createElement('p');
  verdict.className = 'tok-paste-verdict';
  verdict.setAttribute('role', 'status');
  pasteRow.append(useBtn, count);
  pPaste.body.append(area, pasteRow, verdict);
  let pending = false;

  const setVerdict = (text, bad = false) => { verdict.textContent = text; verdict.classList.toggle('bad', bad); };
  useBtn.onclick = () => {
    if (!counter.update()) return setVerdict(counter.message, true);
    if (new Set(area.value).size < 2) return setVerdict(t('tokenizer.paste_empty'), true);
    pending = true;
    setVerdict(t('tokenizer.paste_sent'));
    setParams({ source: 'pasted', pasted: area.value });
  };
  client.on('error', (m) => {
    if (!pending) return;
    pending = false;
    setVerdict(t('tokenizer.server_said', { m: m.message }), true);
  });

  let last = null;

  function chip(piece, id) {
    const span = document.createElement('span');
    span.className = 'tok-chip';
    span.style.background = hue(id);
    const p = document.createElement('b');
    p.textContent = show(piece);
    const i = document.createElement('small');
    i.textContent = String(id);
    span.append(p, i);
    span.title = `${JSON.stringify(piece)} → ${id}`;
    return span;
  }

  const kindName = (k, m) => (k === 'bpe' ? t('tokenizer.bpe', { n: m.merges_done }) : t(`tokenizer.${k}`));

  function drawSample(m) {
    sampleBox.replaceChildren(...['char', 'word', 'bpe', 'sp'].map((k) => {
      const row = document.createElement('div');
      row.className = 'tok-cut';
      row.dataset.kind = k;
      const h = document.createElement('h4');
      const c = m.cuts[k];
      h.textContent = `${kindName(k, m)} · ${c.pieces.length}`;
      const chips = document.createElement('div');
      chips.className = 'tok-chips';
      chips.append(...c.pieces.map((p, i) => chip(p, c.ids[i])));
      row.append(h, chips);
      return row;
    }));
  }

  function drawCompare(m) {
    const head = document.createElement('tr');
    for (const key of ['kind', 'vocab_col', 'tokens_col', 'cpt_col']) {
      const th = document.createElement('th');
      th.textContent = t(`tokenizer.${key}`);
      head.append(th);
    }
    const rows = ['char', 'word', 'bpe', 'sp'].map((k) => {
      const c = m.compare[k];
      const tr = document.createElement('tr');
      tr.dataset.kind = k;
      const cells = [kindName(k, m), c.vocab.toLocaleString(), c.tokens.toLocaleString(), (m.chars / c.tokens).toFixed(2)];
      for (const v of cells) { const td = document.createElement('td'); td.textContent = v; tr.append(td); }
      if (k === 'sp' && c.requested !== c.vocab) {
        const s = document.createElement('small');
        s.textContent = ` (${t('tokenizer.sp_note', { r: c.requested, v: c.vocab })})`;
        tr.children[1].append(s);
      }
      return tr;
    });
    table.replaceChildren(head, ...rows);
  }

  function drawMerges(m) {
    mergeNote.textContent = m.finished ? t('tokenizer.finished') : m.merges_done ? '' : t('tokenizer.no_merges');
    mergeList.replaceChildren(...m.recent.map((r, i) => {
      const li = document.createElement('li');
      if (i === 0) li.className = 'newest';
      const k = document.createElement('span'); k.className = 'k'; k.textContent = `#${r.k}`;
      const a = document.createElement('code'); a.textContent = show(r.left);
      const b = document.createElement('code'); b.textContent = show(r.right);
      const c = document.createElement('code'); c.className = 'piece'; c.textContent = show(r.piece);
      const n = document.createElement('span'); n.className = 'n'; n.textContent = t('tokenizer.times', { n: r.count });
      li.append(k, a, ' + ', b, ' → ', c, n);
      return li;
    }));
  }

  function idRow(label, ids, cls) {
    const row = document.createElement('div');
    row.className = `tok-io-row ${cls}`;
    const h = document.createElement('span');
    h.className = 'tok-io-label';
    h.textContent = label;
    row.append(h, ...ids.map((id) => { const s = document.createElement('span'); s.className = 'tok-id'; s.textContent = String(id); return s; }));
    return row;
  }

  function drawIo(m) {
    const shift = document.createElement('div');
    shift.className = 'tok-io-grid';
    shift.append(
      idRow(t('tokenizer.io_ids'), m.io.ids, 'ids'),
      idRow(t('tokenizer.io_input'), m.io.input, 'input'),
      idRow(t('tokenizer.io_labels'), m.io.labels, 'labels'),
    );
    const ex = document.createElement('p');
    ex.className = 'tok-io-example';
    const e = m.example;
    ex.textContent = `${t('tokenizer.io_example')}: [${e.ids.join(', ')}] → ${t('tokenizer.io_input')} [${e.input.join(', ')}], ${t('tokenizer.io_labels')} [${e.labels.join(', ')}]`;
    ioBox.replaceChildren(shift, ex);
  }

  function drawAll(f) {
    const m = f.meta;
    counter.setMax(m.max_pasted_bytes);
    drawMerges(m);
    drawSample(m);
    drawCompare(m);
    drawIo(m);
    const top = f.tensors.top_counts;
    if (top) topBars.draw(top.labels.map(show), Array.from(top.data));
    nums.show([
      { label: t('tokenizer.chars'), value: m.chars.toLocaleString() },
      { label: t('tokenizer.bytes'), value: m.bytes.toLocaleString() },
      { label: t('tokenizer.merges_done'), value: String(m.merges_done) },
      { label: t('tokenizer.vocab'), value: String(m.compare.bpe.vocab) },
      { label: t('tokenizer.tokens'), value: m.compare.bpe.tokens.toLocaleString() },
      { label: t('tokenizer.cpt'), value: f.scalars.chars_per_token },
    ]);
    if (m.pasted_missing) setVerdict(t('tokenizer.paste_missing'), true);
    else if (m.source === 'pasted' && pending) { pending = false; setVerdict(t('tokenizer.paste_ok', { n: m.chars.toLocaleString() })); }
  }

  useBtn.textContent = t('tokenizer.paste_use');
  area.placeholder = t('tokenizer.paste_placeholder');
  const p0 = store.get('params');
  if (p0 && p0.pasted) area.value = p0.pasted;
  counter.update();

  return {
    frame(f) {
      if (!f.meta || !f.meta.cuts) return;
      last = f;
      drawAll(f);
    },
    scalars(rows) { curve.add(rows); },
    reset() { curve.clear(); },
    relabel() {
      for (const p of [pCurve, pMerges, pSample, pCompare, pTop, pIo, pNum, pPaste]) p.relabel();
      useBtn.textContent = t('tokenizer.paste_use');
      area.placeholder = t('tokenizer.paste_placeholder');
      counter.relabel();
      if (last) drawAll(last);
    },
  };
}
