// A network diagram in TensorFlow Playground's style: every node is a small heatmap of
// what it computes over the input plane (painted by neuronMaps on a canvas underneath),
// every weight an SVG curve whose width and colour follow its value (blue +, orange −).
// Click a weight (or a node's bias) to type a new value; click an input to switch it on or
// off; the +/− buttons change the hidden layers. It draws only what it is given.
import { ensureCss } from '../core/css.js';
import { addStrings, t } from '../core/i18n.js';
import { part } from './mapGrid.js';
import { DIVERGING, neuronMaps } from './neuronMaps.js';
import { fmt } from './plot.js';

addStrings({
  en: {
    'nd.inputs': 'Inputs', 'nd.output': 'Output', 'nd.layer': 'Layer {n} · {w}', 'nd.layer_short': 'layer',
    'nd.hidden_layers': '{n} hidden layers', 'nd.hidden_layers.one': '{n} hidden layer', 'nd.more_layers': 'Add a hidden layer', 'nd.fewer_layers': 'Remove the last hidden layer',
    'nd.more_units': 'One more unit in this layer', 'nd.fewer_units': 'One unit fewer in this layer',
    'nd.weight': 'weight', 'nd.bias': 'bias', 'nd.unit': 'unit', 'nd.click_to_edit': 'click to edit',
  },
  zh: {
    'nd.inputs': '输入', 'nd.output': '输出', 'nd.layer': '第 {n} 层 · {w}', 'nd.layer_short': '层',
    'nd.hidden_layers': '{n} 个隐藏层', 'nd.more_layers': '加一个隐藏层', 'nd.fewer_layers': '去掉最后一个隐藏层',
    'nd.more_units': '这一层加一个神经元', 'nd.fewer_units': '这一层减一个神经元',
    'nd.weight': '权重', 'nd.bias': '偏置', 'nd.unit': '神经元', 'nd.click_to_edit': '点击修改',
  },
});

const SVG = 'http://www.w3.org/2000/svg';
const CSS = '/css/labs/network-diagram.css';
const NODE = 40; // node size, px
const PITCH = 50; // vertical distance between nodes
const TOP = 58; // room for the column headers (more if they are taller: a phone's 44-px buttons)
const LEFT = 78; // room for the input labels
const MIN_STEP = NODE + 30; // the least distance between two columns before the whole is scaled

function svg(tag, attrs = {}) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  return n;
}

/** The colour of a weight: playground's scale, saturated at |w| = 1. */
function colour(w) {
  const i = Math.max(0, Math.min(255, Math.round(127.5 + 127.5 * Math.max(-1, Math.min(1, w))))) * 4;
  return `rgb(${DIVERGING[i]},${DIVERGING[i + 1]},${DIVERGING[i + 2]})`;
}
const width = (w) => 0.6 + 5 * Math.min(1, Math.abs(w) / 4);

/**
 * el: an empty container. Callbacks (all optional): onEditWeight(layer, i, j, value),
 * onEditBias(layer, i, value), onToggleInput(name), onHidden(widths).
 * Options: maxLayers, maxWidth, limit (|value| a learner may type).
 */
export function networkDiagram(el, { onEditWeight, onEditBias, onToggleInput, onHidden, maxLayers = 6, maxWidth = 8, limit = 10 } = {}) {
  ensureCss(CSS);
  el.classList.add('net-diagram');
  const bar = document.createElement('div');
  bar.className = 'nd-bar';
  const stage = document.createElement('div');
  stage.className = 'nd-stage';
  el.append(bar, stage);
  const maps = neuronMaps(stage, { className: 'nd-maps' });
  const root = svg('svg', { class: 'nd-svg' });
  const heads = part('div', 'nd-heads');
  const tip = part('div', 'nd-tip', { hidden: true });
  const editor = part('form', 'nd-editor', { hidden: true });
  editor.innerHTML = '<label><span></span> <input type="number" step="0.1" required></label> <button type="submit">OK</button>';
  stage.append(root, heads, tip, editor);

  let net = null; // the latest drawn network
  let key = ''; // its structure; the SVG is rebuilt only when this changes
  let edges = []; // [{layer, i, j, path, hit}]
  let nodes = []; // [{kind, layer, i, name, rect, bias}]
  let readOnly = false;
  let editing = null;

  // -- layout ------------------------------------------------------------------------------
  function columns(n) {
    const cols = [n.inputs.map((inp) => ({ kind: 'input', ...inp }))];
    n.hidden.forEach((h, l) => cols.push(Array.from({ length: h.width }, (_, i) => ({ kind: 'hidden', layer: l, i }))));
    cols.push(n.outputs.map((o, i) => ({ kind: 'output', layer: n.hidden.length, i, ...o })));
    return cols;
  }

  // Laid out at least MIN_STEP apart; where the column is narrower than that (a phone, six
  // hidden layers) the whole stage is scaled down to fit it, never wider than the column.
  let top = TOP;
  let minStep = MIN_STEP; // or the widest column header (two 44-px buttons on a phone)
  let scale = 1;
  function geometry(cols) {
    const avail = el.clientWidth || 700;
    const need = LEFT + (cols.length - 1) * minStep + NODE + 40;
    const W = Math.max(need, avail);
    const H = top + Math.max(...cols.map((c) => c.length)) * PITCH + 8;
    const step = (W - LEFT - NODE - 40) / Math.max(1, cols.length - 1);
    const pos = cols.map((c, ci) => c.map((_, r) => ({ x: LEFT + ci * step, y: top + r * PITCH })));
    return { W, H, pos, step, scale: Math.min(1, avail / W) };
  }

  function fit(g) {
    scale = g.scale;
    stage.style.width = `${g.W}px`;
    stage.style.transform = scale < 1 ? `scale(${scale})` : '';
    stage.style.transformOrigin = '0 0';
    // A transform leaves the layout box as it was: give back what the scaling took.
    stage.style.marginRight = `${-(g.W * (1 - scale))}px`;
    stage.style.marginBottom = `${-(g.H * (1 - scale))}px`;
  }

  function edgePath(a, b) {
    const x1 = a.x + NODE, y1 = a.y + NODE / 2, x2 = b.x, y2 = b.y + NODE / 2, mx = (x1 + x2) / 2;
    return `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
  }

  // -- structure (rebuilt when the architecture changes) -----------------------------------
  function build(n, cols, g) {
    root.replaceChildren();
    heads.replaceChildren();
    root.setAttribute('width', g.W);
    root.setAttribute('height', g.H);
    root.setAttribute('viewBox', `0 0 ${g.W} ${g.H}`);
    const gEdges = svg('g', { class: 'nd-edges' });
    const gNodes = svg('g', { class: 'nd-nodes' });
    root.append(gEdges, gNodes);
    edges = [];
    nodes = [];
    // Column l + 1 takes its inputs from column l; the inputs' column skips switched-off ones.
    for (let c = 1; c < cols.length; c++) {
      const src = c === 1 ? cols[0].map((inp, r) => [inp, r]).filter(([inp]) => inp.enabled).map(([, r]) => r) : cols[c - 1].map((_, r) => r);
      cols[c].forEach((_, i) => src.forEach((r, j) => {
        const d = edgePath(g.pos[c - 1][r], g.pos[c][i]);
        const path = svg('path', { d, class: 'nd-edge' });
        const hit = svg('path', { d, class: 'nd-hit' });
        const e = { layer: c - 1, i, j, path, hit };
        hit.addEventListener('mouseenter', (ev) => showTip(ev, e));
        hit.addEventListener('mousemove', (ev) => moveTip(ev));
        hit.addEventListener('mouseleave', () => { tip.hidden = true; });
        hit.addEventListener('click', (ev) => openEditor(ev, e));
        gEdges.append(path);
        edges.push(e);
      }));
    }
    for (const e of edges) gEdges.append(e.hit); // hit areas above every visible curve
    cols.forEach((col, c) => col.forEach((nd, r) => {
      const p = g.pos[c][r];
      const rect = svg('rect', { x: p.x, y: p.y, width: NODE, height: NODE, rx: 3, class: `nd-node nd-${nd.kind}` });
      const item = { kind: nd.kind, layer: nd.layer, i: nd.i, row: r, rect, x: p.x, y: p.y };
      if (nd.kind === 'input') {
        rect.classList.toggle('off', !nd.enabled);
        const label = svg('text', { x: p.x - 6, y: p.y + NODE / 2, class: 'nd-label', 'text-anchor': 'end', 'dominant-baseline': 'middle' });
        label.textContent = nd.label;
        gNodes.append(label);
        rect.addEventListener('click', () => { if (!readOnly && onToggleInput) onToggleInput(nd.name); });
      } else {
        item.bias = svg('rect', { x: p.x - 4, y: p.y + NODE - 8, width: 8, height: 8, class: 'nd-bias' });
        rect.addEventListener('click', (ev) => openEditor(ev, item));
        rect.addEventListener('mouseenter', (ev) => showTip(ev, item));
        rect.addEventListener('mousemove', (ev) => moveTip(ev));
        rect.addEventListener('mouseleave', () => { tip.hidden = true; });
      }
      gNodes.append(rect);
      if (item.bias) gNodes.append(item.bias);
      if (nd.kind === 'output' && nd.label) {
        const label = svg('text', { x: p.x + NODE + 6, y: p.y + NODE / 2, class: 'nd-label', 'dominant-baseline': 'middle' });
        label.textContent = nd.label;
        gNodes.append(label);
      }
      nodes.push(item);
    }));
    buildHeads(n, cols, g);
  }

  function button(text, aria, fn) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.setAttribute('aria-label', aria);
    b.disabled = readOnly;
    b.onclick = fn;
    return b;
  }

  function buildHeads(n, cols, g) {
    const widths = n.hidden.map((h) => h.width);
    const setW = (ws) => onHidden && onHidden(ws);
    cols.forEach((col, c) => {
      const h = document.createElement('div');
      h.className = 'nd-head';
      h.style.left = `${g.pos[c][0] ? g.pos[c][0].x + NODE / 2 : LEFT + c * g.step + NODE / 2}px`;
      const title = document.createElement('div');
      if (c === 0) title.textContent = t('nd.inputs');
      else if (c === cols.length - 1) title.textContent = t('nd.output');
      else title.textContent = t('nd.layer', { n: c, w: col.length });
      h.append(title);
      if (c > 0 && c < cols.length - 1 && onHidden) {
        const l = c - 1;
        const row = document.createElement('div');
        row.append(
          button('−', t('nd.fewer_units'), () => { if (widths[l] > 1) setW(widths.map((w, i) => (i === l ? w - 1 : w))); }),
          button('+', t('nd.more_units'), () => { if (widths[l] < maxWidth) setW(widths.map((w, i) => (i === l ? w + 1 : w))); }),
        );
        h.append(row);
      }
      heads.append(h);
    });
    bar.replaceChildren();
    if (onHidden) {
      const span = document.createElement('span');
      span.textContent = t('nd.hidden_layers', { n: widths.length });
      bar.append(
        button('−', t('nd.fewer_layers'), () => { if (widths.length) setW(widths.slice(0, -1)); }),
        button('+', t('nd.more_layers'), () => { if (widths.length < maxLayers) setW([...widths, widths.length ? widths[widths.length - 1] : 4]); }),
        span,
      );
    }
  }

  // -- values (every frame) ------------------------------------------------------------------
  const weightOf = (e) => {
    const W = net.weights[e.layer];
    return W ? W.data[e.i * W.shape[1] + e.j] : 0;
  };
  const biasOf = (nd) => {
    const b = net.biases[nd.layer];
    return b ? b.data[nd.i] : 0;
  };

  function update(g) {
    for (const e of edges) {
      const w = weightOf(e);
      e.path.setAttribute('stroke', colour(w));
      e.path.setAttribute('stroke-width', width(w).toFixed(2));
    }
    const items = [];
    for (const nd of nodes) {
      if (nd.bias) nd.bias.setAttribute('fill', colour(biasOf(nd)));
      // Maps come from the network drawn now, never from the one the structure was built for.
      const m = nd.kind === 'hidden' ? { tensor: net.hidden[nd.layer].maps, k: nd.i }
        : nd.kind === 'input' ? net.inputs[nd.row].map : net.outputs[nd.row].map;
      if (m && m.tensor) items.push({ ...m, x: nd.x, y: nd.y, size: NODE });
      else items.push({ x: nd.x, y: nd.y, size: NODE, fill: '#f1f1ef' });
    }
    maps.drawAt(items, g.W, g.H);
  }

  // -- hover and edit ------------------------------------------------------------------------
  function describe(it) {
    if (it.j !== undefined) return `${t('nd.weight')} ${fmt(weightOf(it), 4)} · ${t('nd.layer_short')} ${it.layer}: ${it.j} → ${it.i}`;
    return `${t('nd.bias')} ${fmt(biasOf(it), 4)} · ${t('nd.layer_short')} ${it.layer}, ${t('nd.unit')} ${it.i}`;
  }
  function moveTip(ev) {
    const box = stage.getBoundingClientRect();
    tip.style.left = `${(ev.clientX - box.left) / scale + 12}px`;
    tip.style.top = `${(ev.clientY - box.top) / scale + 12}px`;
  }
  function showTip(ev, it) {
    if (!net) return;
    tip.textContent = describe(it) + (readOnly ? '' : ` — ${t('nd.click_to_edit')}`);
    tip.hidden = false;
    moveTip(ev);
  }

  function openEditor(ev, it) {
    if (readOnly || !net) return;
    ev.stopPropagation();
    editing = it;
    tip.hidden = true;
    const isWeight = it.j !== undefined;
    editor.querySelector('span').textContent = isWeight ? t('nd.weight') : t('nd.bias');
    const input = editor.querySelector('input');
    input.min = String(-limit);
    input.max = String(limit);
    input.value = String(Number((isWeight ? weightOf(it) : biasOf(it)).toFixed(3)));
    const box = stage.getBoundingClientRect();
    editor.style.left = `${Math.max(0, Math.min(box.width / scale - 220, (ev.clientX - box.left) / scale))}px`;
    editor.style.top = `${(ev.clientY - box.top) / scale + 8}px`;
    editor.hidden = false;
    input.focus();
    input.select();
  }
  editor.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = Number(editor.querySelector('input').value);
    editor.hidden = true;
    if (!editing || !Number.isFinite(v)) return;
    const value = Math.max(-limit, Math.min(limit, v));
    if (editing.j !== undefined) onEditWeight?.(editing.layer, editing.i, editing.j, value);
    else onEditBias?.(editing.layer, editing.i, value);
    editing = null;
  });
  editor.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { editor.hidden = true; editing = null; } });
  document.addEventListener('click', (ev) => { if (!editor.hidden && !editor.contains(ev.target)) editor.hidden = true; });

  let lastW = 0;
  return {
    el,
    /**
     * n: {inputs: [{name, label, enabled, map?: {tensor, k}}], hidden: [{width, maps}],
     *     outputs: [{label, map: {tensor, k, lut?, range?}}], weights: [{data, shape}], biases: [{data}]}
     */
    draw(n) {
      net = n;
      const cols = columns(n);
      let g = geometry(cols);
      const k = JSON.stringify([n.inputs.map((i) => [i.name, i.enabled, i.label]), n.hidden.map((h) => h.width), n.outputs.map((o) => o.label), g.W, g.scale, readOnly, t('nd.inputs')]);
      if (k !== key || g.W !== lastW) {
        build(n, cols, g);
        // The column headers' height (their buttons are 44 px on a phone): the nodes start below.
        // Its widest header sets the least distance between columns (no header on another).
        const headsH = Math.max(0, ...Array.from(heads.children, (h) => h.offsetTop + h.offsetHeight)) + 6;
        const headsW = Math.max(0, ...Array.from(heads.children, (h) => h.offsetWidth)) + 8;
        if (Math.max(TOP, headsH) !== top || Math.max(MIN_STEP, headsW) !== minStep) {
          top = Math.max(TOP, headsH);
          minStep = Math.max(MIN_STEP, headsW);
          g = geometry(cols);
          build(n, cols, g);
        }
        key = k; lastW = g.W;
      }
      fit(g);
      update(g);
    },
    setReadOnly(ro) { readOnly = ro; key = ''; if (net) this.draw(net); },
    relabel() { key = ''; if (net) this.draw(net); },
  };
}
