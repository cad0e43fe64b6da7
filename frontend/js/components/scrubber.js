// The timeline scrubber: drag back to any recorded step; "live" returns to the running model.
// Its row stays in view on a tall page (sticky at the window's bottom: learner-tools.css).
import { ensureCss } from '../core/css.js';
import { t } from '../core/i18n.js';

export function scrubber(el, { onSeek, onLive }) {
  el.classList.add('scrubber');
  ensureCss('/css/learner-tools.css'); // the timeline row kept in view on a tall page (sticky)
  el.innerHTML = `
    <label><span data-i18n="timeline"></span>
      <input type="range" min="0" max="0" value="0" step="1" data-i18n-aria="timeline"></label>
    <output></output>
    <button type="button" class="live" data-i18n="back_to_live"></button>`;
  const range = el.querySelector('input');
  const out = el.querySelector('output');
  const live = el.querySelector('.live');
  let latest = 0;
  let scrubbing = false;
  let shown = null; // the step of the replayed frame on screen (the nearest recorded one)
  let sendTimer = null;
  const label = () => {
    out.textContent = scrubbing ? t('viewing_step', { step: shown ?? range.value, live: latest }) : t('live_step', { step: latest });
    live.hidden = !scrubbing;
    el.classList.toggle('scrubbing', scrubbing);
  };
  range.oninput = () => {
    scrubbing = Number(range.value) < latest;
    shown = null;
    label();
    clearTimeout(sendTimer); // one seek per pause in the drag, not one per pixel
    sendTimer = setTimeout(() => (scrubbing ? onSeek(Number(range.value)) : onLive()), 30);
  };
  const goLive = () => { scrubbing = false; range.value = latest; label(); onLive(); };
  live.onclick = goLive;
  label();
  return {
    el,
    get scrubbing() { return scrubbing; },
    get value() { return Number(range.value); },
    setLatest(step) {
      if (step === latest && range.max === String(step)) return; // frames, rows and status all report it
      latest = step;
      range.max = String(step);
      if (!scrubbing) range.value = String(step);
      label();
    },
    seekTo(step) {
      const s = Math.max(0, Math.min(latest, step));
      range.value = String(s);
      range.oninput();
    },
    /** The replayed frame drawn is this step's (recorded frames can be sparse). */
    shown(step) { if (scrubbing && shown !== step) { shown = step; label(); } },
    goLive,
    reset() { scrubbing = false; latest = 0; range.max = '0'; range.value = '0'; label(); },
    relabel: label,
  };
}
