// Presenter mode (projector), presentation clickers, keyboard, the embed mode, and the
// link's keys the page did not understand (named in a note, never silently dropped).
//   space / .          play or pause          p      presenter mode on/off
//   → / PageDown       one step               b      blank screen
//   ← / PageUp         back one recorded step shift+←/→  scrub
import { ensureCss } from './core/css.js';
import { addStrings, currentLang, lang, t } from './core/i18n.js';
import { storeKey } from './core/url.js';

/** Settles when the presenter sheet has applied: the shell builds the view after it (its
 *  canvases read the sizes). */
export const presenterSheet = ensureCss('/css/presenter.css');

addStrings({
  en: {
    'link.unknown': 'This link has settings the lab does not know, so they were ignored: {keys}. The lab runs without them.',
    'link.did_you_mean': '{key} (did you mean “{like}”?)',
  },
  zh: {
    'link.unknown': '这个链接里有本实验不认识的设置，已忽略：{keys}。本实验照常运行，不使用它们。',
    'link.did_you_mean': '{key}（你是想写“{like}”吗？）',
  },
});

const CONTROL_NAMES = ['play', 'step', 'step10', 'reset', 'speed', 'scrub', 'params', 'class', 'keep', 'try'];

/** url: readUrl()'s result; its `state` holds the lab's declared view keys the link sets. */
export function presenter({ store, client, scrub, bar, url }) {
  const body = document.body;
  const blank = document.createElement('div');
  blank.className = 'blank-screen';
  blank.hidden = true;
  body.append(blank);
  // The home link keeps presenter mode: the catalog passes it on to the lab or lesson the
  // teacher opens next (catalog.js), so the projector does not fall back to the page view.
  const home = document.querySelector('.top .home');
  // On the projector the dashboard's "Keep this run" joins the class tools' one row (its
  // own row above the picture cost the dashboard's bottom); it goes back out of presenter mode.
  const keep = document.querySelectorAll('#view .dash-keep').length === 1 ? document.querySelector('#view .dash-keep') : null;
  const keepHome = keep && { parent: keep.parentElement, next: keep.nextSibling };
  const placeKeep = (on) => {
    const tools = document.getElementById('class-tools');
    if (!keep || !tools) return;
    if (on) tools.append(keep);
    else keepHome.parent.insertBefore(keep, keepHome.next);
  };
  store.on('present', (on) => {
    body.classList.toggle('present', !!on);
    if (home) home.setAttribute('href', on ? '/?present=1' : '/');
    placeKeep(!!on);
  });
  store.on('blank', (on) => { blank.hidden = !on; });
  if (url.view.present === '1') store.set('present', true);
  // The view the link names (selected layer, head, channel...): the view follows the store.
  for (const [k, v] of Object.entries(url.state || {})) store.set(storeKey(k), v);

  fitPicture(store);

  // ?embed=1&controls=play,step: only the view and the named controls, for an iframe.
  if (url.view.embed === '1') {
    body.classList.add('embed');
    const wanted = new Set((url.view.controls || 'play,step').split(',').filter((c) => CONTROL_NAMES.includes(c)));
    for (const el of document.querySelectorAll('#controls [data-act]')) {
      const act = el.dataset.act;
      const c = act === 'speed' ? el.closest('label.speed') : el;
      c.hidden = !wanted.has(act);
      c.dataset.embedOff = c.hidden ? '1' : ''; // controls.js keeps it out
    }
    body.classList.toggle('embed-scrub', wanted.has('scrub'));
    body.classList.toggle('embed-params', wanted.has('params'));
    // What else a reader could press is a control too (app.css): "Keep this run", the try
    // buttons and the class tools show only when named.
    for (const part of ['keep', 'try', 'class']) body.classList.toggle(`embed-${part}`, wanted.has(part));
    // The host page sizes its iframe to the lab (examples/embed.js): the lab's height, posted
    // whenever it changes, so the reader sees the whole picture without scrolling inside.
    if (window.parent !== window) {
      const lab = document.querySelector('main.lab') || body;
      let posted = 0;
      const post = () => {
        const h = Math.ceil(lab.getBoundingClientRect().bottom + window.scrollY + 8);
        if (h !== posted) { posted = h; window.parent.postMessage({ type: 'shaomai:height', height: h }, '*'); }
      };
      new ResizeObserver(post).observe(lab);
    }
  }

  // The link's keys neither the page nor the lab knows (`foo=1`, a misspelt `n_layer`): one
  // note names them (and the name each most likely meant); the URL the page writes drops them.
  if (url.unknown && url.unknown.length) {
    const p = document.createElement('p');
    p.dataset.note = 'link-unknown';
    const say = () => {
      const keys = url.unknown.map((u) => (u.like ? t('link.did_you_mean', { key: `“${u.key}”`, like: u.like }) : `“${u.key}”`));
      p.textContent = t('link.unknown', { keys: keys.join(currentLang() === 'zh' ? '、' : ', ') });
    };
    say();
    lang.on('lang', say);
    document.getElementById('notes')?.append(p);
  }

  const driver = () => store.get('role') === 'driver';
  const backOne = () => {
    const shown = store.get('shownStep');
    if (shown > 0) scrub.seekTo(shown - 1);
  };
  document.addEventListener('keydown', (e) => {
    if (e.target.closest('input, textarea, select, [contenteditable]') || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key;
    if (key === ' ' || key === '.') { e.preventDefault(); if (driver()) bar.togglePlay(); }
    else if (e.shiftKey && key === 'ArrowRight') scrub.seekTo(scrub.value + 1);
    else if (e.shiftKey && key === 'ArrowLeft') scrub.seekTo(scrub.value - 1);
    else if (key === 'ArrowRight' || key === 'PageDown') {
      e.preventDefault();
      if (scrub.scrubbing) scrub.seekTo(store.get('shownStep') + 1);
      else if (driver()) client.control('step', { count: 1 });
    } else if (key === 'ArrowLeft' || key === 'PageUp') { e.preventDefault(); backOne(); }
    else if (key === 'p' || key === 'P') store.set('present', !store.get('present'));
    else if (key === 'b' || key === 'B') store.set('blank', !store.get('blank'));
    else if (key === 'Escape' && store.get('blank')) store.set('blank', false);
  });
}

/** Presenter mode on a wide screen: the lab's first panel with a map grid fits the view that
 *  is left (a class's tools row, a lesson's column): its grid gives up height until the
 *  panel's bottom (an explanation, an info column) is on screen. Shrink only; a change of
 *  the view's own size starts again from the sheet's height (no back-and-forth). */
function fitPicture(store) {
  const view = document.getElementById('view');
  if (!view) return;
  const wide = matchMedia('(min-width: 761px)');
  let lastSize = '';
  let frame = 0;
  const gridOf = () => view.querySelector('.panel .map-grid');
  const fit = () => {
    frame = 0;
    const grid = gridOf();
    if (!grid) return;
    if (!store.get('present') || !wide.matches) { grid.style.maxHeight = ''; return; }
    const panel = grid.closest('.panel');
    const v = view.getBoundingClientRect();
    const p = panel.getBoundingClientRect();
    // Only the picture that leads the view, and only where a smaller grid makes it fit.
    if (p.top + view.scrollTop > v.top + 0.4 * v.height) return;
    const over = p.bottom + view.scrollTop - v.bottom + 4;
    const h = grid.getBoundingClientRect().height;
    if (over > 1 && h - over >= 140) grid.style.maxHeight = `${Math.floor(h - over)}px`;
  };
  const soon = () => { if (!frame) frame = requestAnimationFrame(fit); };
  new ResizeObserver(() => {
    const size = `${view.clientWidth}x${view.clientHeight}`;
    if (size !== lastSize) { lastSize = size; const g = gridOf(); if (g) g.style.maxHeight = ''; }
    soon();
  }).observe(view);
  const watchPanel = () => { const g = gridOf(); if (g) panels.observe(g.closest('.panel')); };
  const panels = new ResizeObserver(soon);
  watchPanel();
  new MutationObserver(watchPanel).observe(view, { childList: true });
  store.on('present', () => { const g = gridOf(); if (g) g.style.maxHeight = ''; soon(); });
}
