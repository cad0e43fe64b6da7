// The params form's learner tools (paramForm.js uses them): a slider's value typed exactly
// (checked against the schema's bounds, a clear message when it is outside them), preset
// buttons for common settings, and "reset params to defaults". Presets come from the
// field's schema (`presets`, if a lab declares them) or from the one table below, by
// field name, kept to the values the field's bounds allow.
import { addStrings, t } from '../core/i18n.js';

addStrings({
  en: {
    'form.exact': '{label}: exact value',
    'form.exact_nan': 'Type a number, such as 0.001 or 3e-4',
    'form.exact_int': 'Type a whole number',
    'form.exact_range': 'Type a number from {lo} to {hi}',
    'form.exact_above': 'Type a number above {lo}, up to {hi}',
    'form.presets': 'Common values',
    'form.reset': 'Reset params to defaults',
    'form.reset_title': 'Set every param back to the lab’s default (the run restarts if a non-live param changes)',
  },
  zh: {
    'form.exact': '{label}：精确值',
    'form.exact_nan': '请输入一个数，例如 0.001 或 3e-4',
    'form.exact_int': '请输入整数',
    'form.exact_range': '请输入 {lo} 到 {hi} 之间的数',
    'form.exact_above': '请输入大于 {lo}、不超过 {hi} 的数',
    'form.presets': '常用取值',
    'form.reset': '参数恢复默认',
    'form.reset_title': '把每个参数都设回本实验的默认值（改动非实时参数时会重新开始训练）',
  },
});

// Common settings by field name: a learning rate's usual picks (Adam-style 1e-3 and 3e-4,
// the small models' 3e-3), dropout and weight decay's usual values.
export const PRESETS = {
  lr: [1e-2, 3e-3, 1e-3, 3e-4],
  dropout: [0, 0.1, 0.2],
  weight_decay: [0, 0.01, 0.1],
  temperature: [0.5, 1, 2],
};

/** A number as the box shows it: exact to 6 significant digits, never rounded to 3. */
const shown = (v) => (typeof v === 'number' && Number.isFinite(v) ? String(Number(v.toPrecision(6))) : String(v ?? ''));

/** A bound as the message prints it: 1e-5, not 0.00001 nor 1.0000e-5. */
const bound = (v) => (v !== 0 && Math.abs(v) < 1e-3 ? Number(v.toPrecision(6)).toExponential() : shown(v));

/** Why `v` (typed) is not a value of field p, or null when it is. */
export function refusal(v, p, lo, hi) {
  if (!Number.isFinite(v)) return t('form.exact_nan');
  if (p.type === 'integer' && !Number.isInteger(v)) return t('form.exact_int');
  const above = p.exclusiveMinimum !== undefined && p.minimum === undefined;
  const low = above ? v <= lo : v < lo;
  const high = p.exclusiveMaximum !== undefined && p.maximum === undefined ? v >= hi : v > hi;
  if (low || high) return t(above ? 'form.exact_above' : 'form.exact_range', { lo: bound(lo), hi: bound(hi) });
  return null;
}

/** The typed box beside a slider: {el, error, show(v)}; onValue(v) once a valid value is typed. */
export function exactBox(name, p, { lo, hi, label, onValue }) {
  const el = document.createElement('input');
  el.type = 'text';
  el.inputMode = 'decimal';
  el.className = 'exact';
  el.id = `param-${name}-exact`;
  el.autocomplete = 'off';
  el.spellcheck = false;
  el.setAttribute('aria-label', t('form.exact', { label }));
  const error = document.createElement('small');
  error.className = 'exact-error';
  error.id = `${el.id}-error`;
  error.hidden = true;
  el.setAttribute('aria-describedby', error.id);
  const clear = () => { error.hidden = true; el.removeAttribute('aria-invalid'); };
  el.onchange = () => {
    const text = el.value.trim().replace(/\s+/g, '').replace('，', '.');
    const v = text === '' ? NaN : Number(text);
    const why = refusal(v, p, lo, hi);
    if (why) { error.textContent = why; error.hidden = false; el.setAttribute('aria-invalid', 'true'); return; }
    clear();
    onValue(v);
  };
  el.onkeydown = (ev) => { if (ev.key === 'Enter') { ev.preventDefault(); el.onchange(); } };
  return {
    el,
    error,
    show(v) {
      if (document.activeElement === el && !error.hidden) return; // the learner is fixing a typo
      clear();
      el.value = shown(v);
    },
  };
}

/** Preset buttons for a field (null when it has none): each sets the value at once. */
export function presetButtons(name, p, { lo, hi, onValue }) {
  const values = (Array.isArray(p.presets) ? p.presets : PRESETS[name] || []).filter((v) => refusal(v, p, lo, hi) === null);
  if (!values.length) return null;
  const box = document.createElement('span');
  box.className = 'presets';
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', t('form.presets'));
  for (const v of values) {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.preset = String(v);
    b.textContent = v !== 0 && Math.abs(v) < 1e-2 ? v.toExponential().replace('e-', 'e−') : String(v);
    b.onclick = () => onValue(v);
    box.append(b);
  }
  return box;
}

/** The reset button: sends the defaults of the fields whose value differs from them. */
export function resetButton(props, current, send) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'reset-defaults';
  b.textContent = t('form.reset');
  b.title = t('form.reset_title');
  b.onclick = () => {
    const now = current();
    const diff = {};
    for (const [k, p] of Object.entries(props)) {
      if (!('default' in p) || p.widget === 'hidden') continue;
      if (JSON.stringify(now[k]) !== JSON.stringify(p.default)) diff[k] = p.default;
    }
    if (Object.keys(diff).length) send(diff);
  };
  return b;
}
