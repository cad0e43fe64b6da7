// A number/vector readout: label -> value rows, optional highlight per row.
import { fmt } from './plot.js';

export function readout(el) {
  el.classList.add('readout');
  const table = document.createElement('dl');
  el.append(table);
  return {
    el,
    /** rows: [{label, value, note?, warn?}] */
    show(rows) {
      table.replaceChildren(...rows.flatMap(({ label, value, note, warn }) => {
        const dt = document.createElement('dt');
        dt.textContent = label;
        const dd = document.createElement('dd');
        dd.textContent = typeof value === 'number' ? fmt(value) : value;
        if (note) { const s = document.createElement('small'); s.textContent = ` ${note}`; dd.append(s); }
        if (warn) dd.classList.add('warn');
        return [dt, dd];
      }));
    },
  };
}
