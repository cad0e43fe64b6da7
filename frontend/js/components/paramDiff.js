// A kept run's label: what differs between its params and the current ones, by the schema's
// labels ("Causal mask: on, lr: 0.1"); the dashboard's kept runs and gpt's samples use it.
import { addStrings, pick, t } from '../core/i18n.js';

addStrings({
  en: { 'dash.on': 'on', 'dash.off': 'off' },
  zh: { 'dash.on': '开', 'dash.off': '关' },
});

/** What differs between two params dicts, by the schema's labels: "Causal mask: on, lr: 0.1". */
export function paramDiff(before, after, schema) {
  const props = (schema && schema.properties) || {};
  const out = [];
  for (const k of Object.keys(before || {})) {
    if (!after || JSON.stringify(before[k]) === JSON.stringify(after[k])) continue;
    const p = props[k] || {};
    let v = before[k];
    if (typeof v === 'string' && v.length > 24) continue; // pasted text: no label
    if (typeof v === 'boolean') v = t(v ? 'dash.on' : 'dash.off');
    else if (p.choices && p.choices[v]) v = pick(p.choices[v]);
    else if (typeof v === 'object') v = JSON.stringify(v);
    const name = (pick(p.label) || k).replace(/\s*[(（][^()（）]*[)）]\s*$/, ''); // "Causal mask (see only the past)" -> "Causal mask"
    out.push(`${name}: ${v}`);
  }
  return out.join(', ');
}
