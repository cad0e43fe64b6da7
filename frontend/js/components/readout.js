// A number/vector readout: label -> value rows, optional highlight per row. Rows are updated
// in place, and only where their text changed: views show it on every frame.
import { fmt } from './plot.js';

export function readout(el) {
  el.classList.add('readout');
  const table = document.createElement('dl');
  el.append(table);
  const shown = []; // {dt, dd, key}
  return {
    el,
    /** rows: [{label, value, note?, warn?}] */
    show(rows) {
      while (shown.length < rows.length) {
        const row = { dt: document.createElement('dt'), dd: document.createElement('dd'), key: null };
        table.append(row.dt, row.dd);
        shown.push(row);
      }
      while (shown.length > rows.length) {
        const row = shown.pop();
        row.dt.remove();
        row.dd.remove();
      }
      rows.forEach(({ label, value, note, warn }, i) => {
        const row = shown[i];
        const text = typeof value === 'number' ? fmt(value) : value;
        const key = JSON.stringify([label, text, note || '', !!warn]);
        if (row.key === key) return;
        row.key = key;
        row.dt.textContent = label;
        row.dd.textContent = text;
        if (note) { const s = document.createElement('small'); s.textContent = ` ${note}`; row.dd.append(s); }
        row.dd.classList.toggle('warn', !!warn);
      });
    },
  };
}
