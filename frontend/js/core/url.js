// The lab state lives in the URL so a reload or a shared link shows the same thing.
// Reserved keys: lab, seed, step, lang, present, embed, controls, session, and the lab's
// view-state keys (its catalog entry's `view_keys`, e.g. layer, head; an entry without them:
// layer, head, hover). Everything else is a lab param (lists and objects as JSON).

const MAX_URL_VALUE = 2000;
const BASE = ['lab', 'seed', 'step', 'lang', 'present', 'embed', 'controls', 'session'];

/** The view keys a catalog entry without `view_keys` gets (today's gpt keys). */
export const LEGACY_VIEW_KEYS = {
  layer: { type: 'int', min: 0, max: 64 },
  head: { type: 'int', min: 0, max: 64 },
  hover: { type: 'int', min: -1, max: 4096 },
};

/** View keys every lab has (the catalog entry lists them too): the page handles them itself. */
export const GENERIC_VIEW_KEYS = ['present', 'blank', 'scrub', 'hover'];

/** The lab's own view keys (layer, head, arm, channel...): those the URL and the store carry. */
export const labViewKeys = (keys) => Object.fromEntries(Object.entries(keys || {}).filter(([k]) => !GENERIC_VIEW_KEYS.includes(k)));

let viewKeys = LEGACY_VIEW_KEYS;
let reserved = new Set([...BASE, ...Object.keys(viewKeys)]);

/** The lab's declared view keys (info.view_keys), or the legacy ones when it has none. */
export function viewKeysOf(info) {
  return info && info.view_keys && typeof info.view_keys === 'object' ? info.view_keys : LEGACY_VIEW_KEYS;
}

/** Reserve the lab's view keys in the URL (the shell calls this once it has the lab's info). */
export function setViewKeys(keys) {
  viewKeys = keys || LEGACY_VIEW_KEYS;
  reserved = new Set([...BASE, ...Object.keys(viewKeys)]);
}

/** The store key a view key lives under: the hovered token is the store's `hoverToken`. */
export const storeKey = (k) => (k === 'hover' ? 'hoverToken' : k);

/** A view key's URL text -> its value (int/float/number/bool/str), or undefined if invalid. */
export function parseViewValue(text, spec = {}) {
  const type = spec.type || 'int';
  if (type === 'bool' || type === 'boolean') return text === 'true' || text === '1';
  if (type === 'str' || type === 'string') return spec.choices && !spec.choices.includes(text) ? undefined : text;
  const v = Number(text);
  if (text === '' || !Number.isFinite(v) || ((type === 'int' || type === 'integer') && !Number.isInteger(v))) return undefined;
  if ((spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max)) return undefined;
  return v;
}

export function readUrl(schema) {
  const q = new URLSearchParams(location.search);
  const params = {};
  const props = (schema && schema.properties) || {};
  for (const [k, v] of q) {
    if (reserved.has(k) || !(k in props)) continue;
    params[k] = parseValue(v, props[k]);
  }
  const state = {}; // the lab's view keys the URL sets, parsed
  for (const [k, spec] of Object.entries(labViewKeys(viewKeys))) {
    if (!q.has(k)) continue;
    const v = parseViewValue(q.get(k), spec);
    if (v !== undefined) state[k] = v;
  }
  return {
    lab: q.get('lab'),
    seed: q.has('seed') ? Number(q.get('seed')) : 0,
    step: q.has('step') ? Number(q.get('step')) : null,
    lang: q.get('lang'),
    params,
    view: Object.fromEntries([...q].filter(([k]) => reserved.has(k))),
    state,
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

/**
 * Write params (only those that differ from defaults) and view keys; replaceState, no reload.
 * Returns the params left out because their value is too long for a link ({name: value}):
 * the page says so (it never drops one silently).
 */
export function writeUrl({ lab, seed, params, defaults, extra = {} }) {
  const q = new URLSearchParams(location.search);
  for (const k of [...q.keys()]) if (!reserved.has(k)) q.delete(k);
  q.set('lab', lab);
  if (seed) q.set('seed', String(seed)); else q.delete('seed');
  const left = {};
  for (const [k, v] of Object.entries(params || {})) {
    if (defaults && JSON.stringify(defaults[k]) === JSON.stringify(v)) continue;
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    // Long values (pasted text) stay out of the URL: a link must stay a link.
    if (text.length > MAX_URL_VALUE) { left[k] = v; continue; }
    q.set(k, text);
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === null || v === undefined || v === '') q.delete(k); else q.set(k, String(v));
  }
  history.replaceState(null, '', `${location.pathname}?${q}`);
  return left;
}

export function schemaDefaults(schema) {
  const out = {};
  for (const [k, p] of Object.entries((schema && schema.properties) || {})) if ('default' in p) out[k] = p.default;
  return out;
}
