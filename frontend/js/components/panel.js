// A titled panel holding one chart (or any body), its title translated. A `now` panel (its
// title says "now": a readout of the model as it is) says which past step it shows while
// the timeline is scrubbed back.
import { t } from '../core/i18n.js';
import { viewing } from './viewing.js';

export function panel(parent, titleKey, { chart = true, hint = null, wide = false, now = false } = {}) {
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
    const past = now ? viewing.get() : null;
    if (titleKey) { h.textContent = past === null ? t(titleKey) : t('past_view', { step: past }); body.setAttribute('aria-label', t(titleKey)); }
    el.classList.toggle('past', past !== null);
    if (hint) hintEl.textContent = t(hint);
  };
  relabel();
  if (now) viewing.on(relabel);
  return { el, body, chart: body, relabel };
}
