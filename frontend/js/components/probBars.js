// Horizontal probability bars for a handful of candidates (top-k next tokens). Plain DOM:
// token strings can be spaces, line breaks or repeats, which a plotly category axis would
// merge or hide; a row each keeps them apart and readable.
import { setText } from '../core/dom.js';

/**
 * max: rows shown. format(v): the value's text (default a percentage). scale: 'unit' draws
 * values in 0..1 as they are; 'max' draws them relative to the largest (for norms).
 */
export function probBars(el, { max = 12, format = null, scale = 'unit' } = {}) {
  el.classList.add('prob-bars');
  const list = document.createElement('ol');
  el.append(list);
  const rows = [];
  const row = () => {
    const li = document.createElement('li');
    li.innerHTML = '<span class="pb-label"></span><span class="pb-track"><b></b><i></i></span><span class="pb-value"></span>';
    list.append(li);
    return li;
  };
  return {
    el,
    /**
     * items: [{label, value, ghost?: drawn faint behind (e.g. the odds before temperature /
     * top-k / top-p), hot?: bool, note?: string, kind?: a data-kind for styling, tip?: more
     * hover lines}].
     */
    show(items) {
      const shown = items.slice(0, max);
      const top = scale === 'max' ? Math.max(1e-12, ...shown.map((it) => Math.max(it.value, it.ghost ?? 0))) : 1;
      const text = format || ((v) => `${(v * 100).toFixed(1)}%`);
      while (rows.length < shown.length) rows.push(row());
      rows.forEach((li, i) => {
        const it = shown[i];
        li.hidden = !it;
        if (!it) return;
        setText(li.children[0], it.label);
        const pct = (v) => `${(Math.max(0, Math.min(1, v / top)) * 100).toFixed(1)}%`;
        li.children[1].firstChild.hidden = it.ghost === undefined;
        if (it.ghost !== undefined) li.children[1].firstChild.style.width = pct(it.ghost);
        li.children[1].lastChild.style.width = pct(it.value);
        setText(li.children[2], `${text(it.value)}${it.note ? ` ${it.note}` : ''}`);
        li.classList.toggle('hot', !!it.hot);
        li.dataset.kind = it.kind || '';
        li.title = `${it.label}: ${text(it.value)}${it.ghost === undefined ? '' : ` (${text(it.ghost)})`}${it.tip ? `\n${it.tip}` : ''}`;
      });
    },
    clear() { rows.forEach((li) => { li.hidden = true; }); },
  };
}
