// A titled panel holding one chart (or any body), its title translated.
import { t } from '../core/i18n.js';

export function panel(parent, titleKey, { chart = true, hint = null, wide = false } = {}) {
  const el = document.createElement('section');
  el.className = 'panel';
  if (wide) el.classList.add('wide');
  const h = document.createElement('h3');
  if (titleKey) el.append(h);
  const body = document.createElement('div');
  if (chart) body.className = 'chart';
  el.append(body);
  const hintEl = document.createElement('p');
  hintEl.className = 'hint';
  if (hint) el.append(hintEl);
  parent.append(el);
  const relabel = () => {
    if (titleKey) { h.textContent = t(titleKey); body.setAttribute('aria-label', t(titleKey)); }
    if (hint) hintEl.textContent = t(hint);
  };
  relabel();
  return { el, body, chart: body, relabel };
}
