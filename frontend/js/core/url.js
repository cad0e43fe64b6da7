// The lab state lives in the URL so a reload or a shared link shows the same thing.
// Reserved keys: lab, seed, step, lang, present, embed, controls, session, join (the class
// a student follows: a reload rejoins it), and the lab's
// view-state keys (its catalog entry's `view_keys`, e.g. layer, head; an entry without them:
// layer, head, hover). The lab's params (lists and objects as JSON); any other key is
// returned as `unknown` (with the known name it most likely meant) for the page to name.

const MAX_URL_VALUE = 2000;
const BASE = ['lab', 'seed', 'step', 'lang', 'present', 'embed', 'controls', 'session', 'join', 'scrub'];
// Keys the page reads once and then drops from the URL (a saved run to open, and how).
const ONCE = ['run', 'mode'];

/** The view keys a catalog entry without `view_keys` gets (today's gpt keys). */
export const LEGACY_VIEW_KEYS = {
  layer: { type: 'int', min: 0, max: 64 },
  head: { type: 'int', min: 0, max: 64 },
  hover: { type: 'int', min: -1, max: 4096 },
};

/** View keys every lab has (the catalog entry lists them too): the page handles them itself. */
export const GENERIC_VIEW_KEYS = ['present', 'blank', 'scrub', 'hover', 'low'];

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
  const refused = []; // [{field, text, reason}]: a link's value the lab cannot take (its default is used)
  const props = (schema && schema.properties) || {};
  const unknown = []; // [{key, like}]: a key neither the page nor the lab knows (a typo?)
  const known = [...Object.keys(props), ...Object.keys(labViewKeys(viewKeys))];
  for (const [k, v] of q) {
    if (!reserved.has(k) && !(k in props) && !ONCE.includes(k) && !GENERIC_VIEW_KEYS.includes(k) && !unknown.some((u) => u.key === k)) {
      unknown.push({ key: k, like: closest(k, known) });
    }
    if (reserved.has(k) || !(k in props)) continue;
    const { value, reason } = checkValue(v, props[k]);
    if (reason) refused.push({ field: k, text: v, reason });
    else params[k] = value;
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
    step: q.has('step') && Number.isInteger(Number(q.get('step'))) && Number(q.get('step')) >= 0 ? Number(q.get('step')) : null,
    lang: q.get('lang'),
    params,
    refused,
    unknown,
    view: Object.fromEntries([...q].filter(([k]) => reserved.has(k))),
    state,
  };
}

/** The known name a mistyped key most likely meant (at most 2 edits, or one a prefix of
 * the other), or null. */
export function closest(key, names) {
  const k = key.toLowerCase();
  let best = null, bestD = 3;
  for (const name of names) {
    const n = name.toLowerCase();
    const d = Math.min(n.length, k.length) >= 3 && (n.startsWith(k) || k.startsWith(n)) ? Math.min(2, Math.abs(n.length - k.length)) : edits(k, n);
    if (d < bestD) { best = name; bestD = d; }
  }
  return best;
}

function edits(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** The lowest and highest value a number param takes (its schema's bounds), or undefined. */
export function bounds(prop) {
  return { lo: prop.minimum ?? prop.exclusiveMinimum, hi: prop.maximum ?? prop.exclusiveMaximum };
}

/**
 * A link's text for one param -> {value} or {reason}: 'number' (not a number), 'integer',
 * 'range' (outside the schema's bounds), 'choice' (not one of its choices), 'bool', 'format'
 * (not JSON), 'length'. A refused value is never sent: the lab would refuse to open.
 */
export function checkValue(text, prop) {
  const type = prop.type || (prop.anyOf && prop.anyOf.find((a) => a.type !== 'null')?.type);
  if (prop.enum) return prop.enum.map(String).includes(text) ? { value: prop.enum.find((e) => String(e) === text) } : { reason: 'choice' };
  if (type === 'number' || type === 'integer') {
    const v = Number(text);
    if (text.trim() === '' || !Number.isFinite(v)) return { reason: 'number' };
    if (type === 'integer' && !Number.isInteger(v)) return { reason: 'integer' };
    const { minimum: min, maximum: max, exclusiveMinimum: xmin, exclusiveMaximum: xmax } = prop;
    if ((min !== undefined && v < min) || (max !== undefined && v > max) || (xmin !== undefined && v <= xmin) || (xmax !== undefined && v >= xmax)) return { reason: 'range' };
    return { value: v };
  }
  if (type === 'boolean') return ['true', '1', 'false', '0'].includes(text) ? { value: text === 'true' || text === '1' } : { reason: 'bool' };
  if (type === 'array' || type === 'object') {
    try { return { value: JSON.parse(text) }; } catch { return { reason: 'format' }; }
  }
  if (prop.maxLength !== undefined && text.length > prop.maxLength) return { reason: 'length' };
  return { value: text };
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
