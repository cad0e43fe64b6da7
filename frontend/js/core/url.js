// The lab state lives in the URL so a reload or a shared link shows the same thing.
// Reserved keys: lab, seed, step, lang, present, embed, controls, layer, head. Everything
// else is a lab param (lists and objects as JSON).

const MAX_URL_VALUE = 2000;
const RESERVED = new Set(['lab', 'seed', 'step', 'lang', 'present', 'embed', 'controls', 'layer', 'head', 'session']);

export function readUrl(schema) {
  const q = new URLSearchParams(location.search);
  const params = {};
  const props = (schema && schema.properties) || {};
  for (const [k, v] of q) {
    if (RESERVED.has(k) || !(k in props)) continue;
    params[k] = parseValue(v, props[k]);
  }
  return {
    lab: q.get('lab'),
    seed: q.has('seed') ? Number(q.get('seed')) : 0,
    step: q.has('step') ? Number(q.get('step')) : null,
    lang: q.get('lang'),
    params,
    view: Object.fromEntries([...q].filter(([k]) => RESERVED.has(k))),
  };
}

function parseValue(v, prop) {
  const type = prop.type || (prop.anyOf && prop.anyOf[0].type);
  if (type === 'number' || type === 'integer') return Number(v);
  if (type === 'boolean') return v === 'true' || v === '1';
  if (type === 'array' || type === 'object') {
    try { return JSON.parse(v); } catch { return undefined; }
  }
  return v;
}

/** Write params (only those that differ from defaults) and view keys; replaceState, no reload. */
export function writeUrl({ lab, seed, params, defaults, extra = {} }) {
  const q = new URLSearchParams(location.search);
  for (const k of [...q.keys()]) if (!RESERVED.has(k)) q.delete(k);
  q.set('lab', lab);
  if (seed) q.set('seed', String(seed)); else q.delete('seed');
  for (const [k, v] of Object.entries(params || {})) {
    if (defaults && JSON.stringify(defaults[k]) === JSON.stringify(v)) continue;
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    // Long values (pasted text) stay out of the URL: a link must stay a link.
    if (text.length > MAX_URL_VALUE) continue;
    q.set(k, text);
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === null || v === undefined || v === '') q.delete(k); else q.set(k, String(v));
  }
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

export function schemaDefaults(schema) {
  const out = {};
  for (const [k, p] of Object.entries((schema && schema.properties) || {})) if ('default' in p) out[k] = p.default;
  return out;
}
