// A small labelled matrix: a table of numbers, each cell tinted by its value (diverging
// blue–white–orange, scaled to the largest |value| shown), with its name and shape above.
// Cells can be editable (click or Enter: type a number) or clickable (e.g. toggle a mask).
// It draws what it is given; it computes nothing about the model.
import { ensureCss } from '../core/css.js';
import { fmt } from './plot.js';

const CSS = '/css/labs/matrix-view.css';

const NEG = [47, 111, 223]; // --accent blue
const POS = [232, 112, 42]; // orange

function tint(v, scale) {
  if (!Number.isFinite(v)) return '#e4e1da';
  const a = scale > 0 ? Math.min(1, Math.abs(v) / scale) : 0;
  const c = v < 0 ? NEG : POS;
  const mix = (k) => Math.round(255 + (c[k] - 255) * a * 0.75);
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

/** Nested rows from a decoded 2-D tensor {shape, data}, or rows as given. */
export function toRows(m) {
  if (!m) return [];
  if (Array.isArray(m)) return m;
  const [r, c] = m.shape.length === 2 ? m.shape : [1, m.shape[0]];
  return Array.from({ length: r }, (_, i) => Array.from(m.data.subarray(i * c, (i + 1) * c)));
}

function cellText(v, digits) {
  if (v === Number.NEGATIVE_INFINITY) return '−∞';
  if (v === Number.POSITIVE_INFINITY) return '∞';
  if (typeof v === 'boolean') return v ? '✓' : '✗';
  if (typeof v !== 'number') return String(v ?? '');
  if (Math.abs(v) >= 1e5) return fmt(v, 3);
  // Fixed digits, trailing zeros dropped: 0.800 → 0.8, 2.000 → 2, −0.000 → 0.
  const s = v.toFixed(digits).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  return s === '-0' ? '0' : s.replace('-', '−');
}

/**
 * parent: element to append to. opts: {name, editable, onEdit(i, j, value), onCell(i, j),
 * digits, min, max}. Returns {el, draw({rows, rowLabels, colLabels, note, state, focusRow,
 * editable}), setName(text)}.
 */
export function matrixView(parent, { name = '', editable = false, onEdit = null, onCell = null, digits = 3, min = -10, max = 10 } = {}) {
  ensureCss(CSS);
  const fig = document.createElement('figure');
  fig.className = 'matrix-view';
  const cap = document.createElement('figcaption');
  const nameEl = document.createElement('span');
  nameEl.className = 'mv-name';
  nameEl.textContent = name;
  const shapeEl = document.createElement('code');
  shapeEl.className = 'mv-shape';
  const noteEl = document.createElement('span');
  noteEl.className = 'mv-note';
  cap.append(nameEl, ' ', shapeEl, ' ', noteEl);
  const table = document.createElement('table');
  fig.append(cap, table);
  parent.append(fig);
  let canEdit = editable;
  let current = [];

  function startEdit(td, i, j) {
    if (!canEdit || !onEdit || td.querySelector('input')) return;
    const input = document.createElement('input');
    input.type = 'number';
    input.step = '0.1';
    input.min = String(min);
    input.max = String(max);
    input.value = String(current[i][j]);
    input.setAttribute('aria-label', `${nameEl.textContent} [${i}, ${j}]`);
    td.textContent = '';
    td.append(input);
    input.focus();
    input.select();
    let done = false;
    const finish = (commit) => {
      if (done) return;
      done = true;
      const v = Number(input.value);
      const ok = commit && input.value.trim() !== '' && Number.isFinite(v);
      td.textContent = cellText(current[i][j], digits);
      if (ok && v !== current[i][j]) onEdit(i, j, Math.min(max, Math.max(min, v)));
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); finish(true); td.focus(); }
      else if (e.key === 'Escape') { e.preventDefault(); finish(false); td.focus(); }
    });
    input.addEventListener('blur', () => finish(true));
  }

  function draw({ rows, rowLabels = null, colLabels = null, note = '', state = 'shown', focusRow = null, editable: ed = null, scale = null }) {
    if (ed !== null) canEdit = ed;
    current = toRows(rows);
    const r = current.length, c = r ? current[0].length : 0;
    shapeEl.textContent = `[${r}, ${c}]`;
    noteEl.textContent = note;
    fig.dataset.state = state;
    fig.classList.toggle('editable', !!(canEdit && onEdit));
    fig.classList.toggle('clickable', !!onCell);
    let big = scale;
    if (big === null) {
      big = 0;
      for (const row of current) for (const v of row) if (typeof v === 'number' && Number.isFinite(v)) big = Math.max(big, Math.abs(v));
    }
    const head = document.createElement('tr');
    head.append(document.createElement('th'));
    for (let j = 0; j < c; j++) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = colLabels ? colLabels[j] : String(j);
      head.append(th);
    }
    const body = current.map((row, i) => {
      const tr = document.createElement('tr');
      if (focusRow === i) tr.className = 'focus';
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = rowLabels ? rowLabels[i] : String(i);
      tr.append(th);
      row.forEach((v, j) => {
        const td = document.createElement('td');
        td.textContent = cellText(v, digits);
        td.style.background = typeof v === 'boolean' ? (v ? '#e3f1e6' : '#e4e1da') : tint(v, big);
        td.dataset.i = String(i);
        td.dataset.j = String(j);
        if ((canEdit && onEdit) || onCell) {
          td.tabIndex = 0;
          td.title = typeof v === 'number' ? fmt(v, 6) : '';
        }
        tr.append(td);
      });
      return tr;
    });
    table.replaceChildren(head, ...body);
  }

  table.addEventListener('click', (e) => {
    const td = e.target.closest('td');
    if (!td || td.querySelector('input')) return;
    const i = Number(td.dataset.i), j = Number(td.dataset.j);
    if (onCell) onCell(i, j);
    else startEdit(td, i, j);
  });
  table.addEventListener('keydown', (e) => {
    const td = e.target.closest('td');
    if (!td || e.target !== td || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    e.stopPropagation(); // the page's space/arrow shortcuts must not fire too
    const i = Number(td.dataset.i), j = Number(td.dataset.j);
    if (onCell) onCell(i, j);
    else startEdit(td, i, j);
  });

  return {
    el: fig,
    draw,
    setName(text) { nameEl.textContent = text; },
    get rows() { return current; },
  };
}
