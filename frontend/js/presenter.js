// Presenter mode (projector), presentation clickers, keyboard, and the embed mode.
//   space / .          play or pause          p      presenter mode on/off
//   → / PageDown       one step               b      blank screen
//   ← / PageUp         back one recorded step shift+←/→  scrub
import { storeKey } from './core/url.js';

const CONTROL_NAMES = ['play', 'step', 'step10', 'reset', 'speed', 'scrub', 'params', 'class'];

/** url: readUrl()'s result; its `state` holds the lab's declared view keys the link sets. */
export function presenter({ store, client, scrub, bar, url }) {
  const body = document.body;
  const blank = document.createElement('div');
  blank.className = 'blank-screen';
  blank.hidden = true;
  body.append(blank);
  store.on('present', (on) => body.classList.toggle('present', !!on));
  store.on('blank', (on) => { blank.hidden = !on; });
  if (url.view.present === '1') store.set('present', true);
  // The view the link names (selected layer, head, channel...): the view follows the store.
  for (const [k, v] of Object.entries(url.state || {})) store.set(storeKey(k), v);

  // ?embed=1&controls=play,step: only the view and the named controls, for an iframe.
  if (url.view.embed === '1') {
    body.classList.add('embed');
    const wanted = new Set((url.view.controls || 'play,step').split(',').filter((c) => CONTROL_NAMES.includes(c)));
    for (const el of document.querySelectorAll('#controls [data-act]')) {
      const act = el.dataset.act;
      (act === 'speed' ? el.closest('label.speed') : el).hidden = !wanted.has(act);
    }
    body.classList.toggle('embed-scrub', wanted.has('scrub'));
    body.classList.toggle('embed-params', wanted.has('params'));
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
