// zh/en strings, switchable at runtime. The default follows the browser.
import { createStore } from './store.js';

const tables = {};
export const lang = createStore({ lang: null });

export async function initI18n(initial) {
  const [zh, en] = await Promise.all(['zh', 'en'].map((l) => fetch(`/i18n/${l}.json`).then((r) => r.json())));
  // Merged: a view's module may have added its strings already (it loads alongside).
  tables.zh = { ...zh, ...tables.zh };
  tables.en = { ...en, ...tables.en };
  const browser = (navigator.language || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  setLang(initial === 'zh' || initial === 'en' ? initial : browser);
}

export function currentLang() {
  return lang.get('lang') || 'en';
}

export function setLang(l) {
  document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
  lang.set('lang', l);
  applyDom(document);
}

/** A view adds its own strings: addStrings({zh: {...}, en: {...}}) (keys: '<lab>.<name>'). */
export function addStrings(dict) {
  for (const l of ['zh', 'en']) tables[l] = { ...(tables[l] || {}), ...(dict[l] || {}) };
}

// A device without a mouse or a keyboard (a phone): a string with a `<key>.touch` variant
// says that instead (no "Shift-click" where there is no Shift).
const touchOnly = typeof matchMedia === 'function' && matchMedia('(hover: none) and (pointer: coarse)').matches;

// Plural-aware: with a number `n`, a `<key>.<category>` string (Intl.PluralRules: `.one` for
// English 1) is used where the table has one ("1 hidden layer", "2 hidden layers").
const rules = {};
function plural(l, key, vars) {
  const n = Number(vars.n);
  if (vars.n === undefined || vars.n === null || !Number.isFinite(n) || !tables[l]) return key;
  const cat = (rules[l] ||= new Intl.PluralRules(l)).select(n);
  return `${key}.${cat}` in tables[l] ? `${key}.${cat}` : key;
}

/** t('key', {n: 3}) -> the current language's string with {n} filled in. */
export function t(key, vars = {}) {
  const l = currentLang();
  const k = touchOnly && ((tables[l] && `${key}.touch` in tables[l]) || (tables.en && `${key}.touch` in tables.en)) ? `${key}.touch` : key;
  let s = (tables[l] && tables[l][plural(l, k, vars)]) ?? (tables.en && tables.en[plural('en', k, vars)]) ?? k;
  for (const [k, v] of Object.entries(vars)) s = s.replaceAll(`{${k}}`, v);
  return s;
}

/** Whether a string exists for this key (in the current language or English). */
export function has(key) {
  return Boolean((tables[currentLang()] && key in tables[currentLang()]) || (tables.en && key in tables.en));
}

/** Pick from a {zh, en} dict (lab titles, param labels). */
export function pick(dict) {
  if (!dict) return '';
  return dict[currentLang()] ?? dict.en ?? Object.values(dict)[0];
}

/** Fill [data-i18n] text and [data-i18n-aria] labels under root. */
export function applyDom(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
}
