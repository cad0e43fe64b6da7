// The param form, generated from the lab's JSON Schema: bounded sliders (linear or log),
// selects with zh/en choice labels, toggles, text areas. Hidden widgets are set by the view.
import { pick, t } from '../core/i18n.js';
import { fmt } from './plot.js';

export function paramForm(el, { schema, onChange }) {
  el.classList.add('params');
  const props = schema.properties || {};
  const inputs = {};
  let readOnly = false;

  function build(values) {
    el.replaceChildren();
    for (const [name, p] of Object.entries(props)) {
      if (p.widget === 'hidden' || p.type === 'array' || p.type === 'object') continue;
      const row = document.createElement('div');
      row.className = 'param';
      const id = `param-${name}`;
      const label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = pick(p.label) || name;
      if (p.live) label.title = t('live_param');
      row.append(label);
      const input = control(name, p, id);
      row.append(input.el);
      inputs[name] = input;
      el.append(row);
    }
    set(values);
  }

  function control(name, p, id) {
    const fire = (v) => onChange({ [name]: v });
    if (p.enum) {
      const sel = document.createElement('select');
      sel.id = id;
      for (const v of p.enum) {
        const o = document.createElement('option');
        o.value = v;
        o.textContent = p.choices && p.choices[v] ? pick(p.choices[v]) : v;
        sel.append(o);
      }
      sel.onchange = () => fire(sel.value);
      return { el: sel, set: (v) => { sel.value = v; }, input: sel };
    }
    if (p.type === 'boolean') {
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.id = id;
      box.setAttribute('role', 'switch');
      box.onchange = () => fire(box.checked);
      return { el: box, set: (v) => { box.checked = !!v; }, input: box };
    }
    if (p.type === 'number' || p.type === 'integer') {
      const wrap = document.createElement('span');
      wrap.className = 'slider';
      const range = document.createElement('input');
      range.type = 'range';
      range.id = id;
      const box = document.createElement('output');
      const log = p.scale === 'log';
      const lo = p.minimum ?? p.exclusiveMinimum ?? 0;
      const hi = p.maximum ?? p.exclusiveMaximum ?? 100;
      const toPos = (v) => (log ? Math.log10(v) : v);
      const fromPos = (x) => {
        let v = log ? 10 ** x : x;
        if (p.type === 'integer') v = Math.round(v);
        else if (log) v = Number(v.toPrecision(3));
        return Math.min(hi, Math.max(lo, v));
      };
      range.min = String(toPos(lo));
      range.max = String(toPos(hi));
      range.step = log ? '0.05' : String(p.step ?? (p.type === 'integer' ? 1 : (hi - lo) / 200));
      range.oninput = () => { box.textContent = fmt(fromPos(Number(range.value)), 3); };
      range.onchange = () => fire(fromPos(Number(range.value)));
      wrap.append(range, box);
      return {
        el: wrap,
        input: range,
        set: (v) => { range.value = String(toPos(v)); box.textContent = fmt(v, 3); },
      };
    }
    const area = document.createElement('textarea');
    area.id = id;
    if (p.maxLength) area.maxLength = p.maxLength;
    area.rows = 3;
    area.onchange = () => fire(area.value);
    return { el: area, set: (v) => { area.value = v ?? ''; }, input: area };
  }

  let current = {};
  function set(values) {
    current = { ...current, ...(values || {}) };
    for (const [k, v] of Object.entries(values || {})) if (inputs[k]) inputs[k].set(v);
    // show_if: {other: value | [values]} hides a field that does not apply right now.
    for (const [name, p] of Object.entries(props)) {
      if (!p.show_if || !inputs[name]) continue;
      const ok = Object.entries(p.show_if).every(([k, want]) => (Array.isArray(want) ? want : [want]).includes(current[k]));
      inputs[name].el.closest('.param').hidden = !ok;
    }
    setReadOnly(readOnly);
  }

  function setReadOnly(ro) {
    readOnly = ro;
    for (const i of Object.values(inputs)) i.input.disabled = ro;
  }

  return { el, build, set, setReadOnly };
}
