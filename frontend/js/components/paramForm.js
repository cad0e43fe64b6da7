// The param form, generated from the lab's JSON Schema: bounded sliders (linear or log),
// selects with zh/en choice labels, toggles, text areas. Hidden widgets are set by the view.
import { ensureCss } from '../core/css.js';
import { pick, t } from '../core/i18n.js';
import { byteCounter, MAX_TEXT_BYTES } from './byteCounter.js';
import { exactBox, presetButtons, resetButton } from './paramExtras.js';

export { MAX_TEXT_BYTES }; // the pasted text's limit in bytes (byteCounter.js)

/**
 * waits: {field: {choice: {field: other, min}}} — choosing `choice` shows `other` (a text box)
 * and waits for at least `min` characters in it before sending both (gpt: "my pasted text").
 */
export function paramForm(el, { schema, onChange, waits = {} }) {
  el.classList.add('params');
  ensureCss('/css/learner-tools.css');
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
    // "Reset params to defaults": the schema's defaults of what differs now, in one change.
    el.append(resetButton(props, () => current, (diff) => onChange(diff)));
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
      sel.onchange = () => {
        const w = waits?.[name]?.[sel.value];
        const other = w && inputs[w.field];
        if (other && [...String(current[w.field] || '')].length < (w.min || 1)) {
          waiting = { name, value: sel.value, ...w };
          set({ [name]: sel.value }); // shows the box; nothing is sent until it is filled
          other.waitHint(t('note.wait_for_text', { min: w.min || 1 }));
          other.input.focus();
          return;
        }
        waiting = null;
        fire(sel.value);
      };
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
      // Typed exactly (validated against the schema's bounds) or picked from the presets.
      const exact = exactBox(name, p, { lo, hi, label: pick(p.label) || name, onValue: (v) => { range.value = String(toPos(v)); fire(v); } });
      range.oninput = () => exact.show(fromPos(Number(range.value)));
      range.onchange = () => fire(fromPos(Number(range.value)));
      wrap.append(range, exact.el);
      const presets = presetButtons(name, p, { lo, hi, onValue: (v) => { range.value = String(toPos(v)); exact.show(v); fire(v); } });
      const group = document.createElement('span');
      group.className = 'slider-group';
      group.append(wrap, exact.error, ...(presets ? [presets] : []));
      return {
        el: group,
        input: range,
        set: (v) => { range.value = String(toPos(v)); exact.show(v); },
      };
    }
    // A text box: its bytes counted as they are typed (the shared byte counter); text over
    // the limit is kept in the box (never cut, never sent) and the page says the limit.
    const wrap = document.createElement('span');
    wrap.className = 'text-param';
    const area = document.createElement('textarea');
    area.id = id;
    area.rows = 3;
    const counter = byteCounter(area, { max: p.max_bytes, maxChars: p.maxLength });
    const count = counter.el;
    const hint = document.createElement('small');
    hint.className = 'wait';
    hint.hidden = true;
    const counted = counter.update;
    area.onchange = () => {
      if (!counted()) return;
      if (waiting && waiting.field === name) {
        if ([...area.value].length < (waiting.min || 1)) return;
        const w = waiting;
        waiting = null;
        hint.hidden = true;
        onChange({ [name]: area.value, [w.name]: w.value });
        return;
      }
      fire(area.value);
    };
    wrap.append(area, hint, count);
    return {
      el: wrap,
      set: (v) => {
        // Text the learner typed and was not sent (over the limit) stays until they change it.
        if (count.classList.contains('over') && (v ?? '') === area.dataset.sent) return;
        area.value = v ?? '';
        area.dataset.sent = area.value;
        counted();
      },
      input: area,
      waitHint: (text) => { hint.textContent = text; hint.hidden = false; },
    };
  }

  let current = {};
  let waiting = null; // a choice waiting for its text box to be filled
  function set(values) {
    if (waiting && values && waiting.name in values && values[waiting.name] !== waiting.value && !(waiting.field in values)) {
      values = { ...values, [waiting.name]: waiting.value }; // the server's echo would hide the box
    }
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
    for (const c of el.querySelectorAll('input, select, textarea, button')) c.disabled = ro;
  }

  return { el, build, set, setReadOnly };
}
