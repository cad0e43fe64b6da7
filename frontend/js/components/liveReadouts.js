// The dock's readouts of the stream itself (no model math): the steps per second actually
// taken, and a polite text alternative of what the charts show, for screen readers.
import { has, t } from '../core/i18n.js';
import { scalarNames } from './plot.js';

/**
 * The steps per second actually taken (not the asked speed), measured from the steps seen
 * between two ticks that both saw the run playing: a student who joins a class at step 300
 * (or a learner pressing play after a jump) is not told of 300 steps in one second.
 */
export function stepRate(el, store) {
  const rate = { at: performance.now(), step: 0, playing: false, shown: '' };
  return setInterval(() => {
    const now = performance.now();
    const s = store.get('step') || 0;
    const playing = store.get('state') === 'playing';
    const n = playing && rate.playing && s >= rate.step ? ((s - rate.step) * 1000) / (now - rate.at) : 0;
    rate.at = now;
    rate.step = s;
    rate.playing = playing;
    const text = n > 0 ? t('steps_per_s_now', { n: n >= 10 ? Math.round(n) : n.toFixed(1) }) : '';
    if (text !== rate.shown) { rate.shown = text; el.textContent = text; }
  }, 1000);
}

// A scalar's name for people: the name its chart's legend gives it (in the page's language),
// else a `scalar.<key>` string; a scalar no chart names is not read out.
const scalarName = (k) => scalarNames.get(k) ?? (has(`scalar.${k}`) ? t(`scalar.${k}`) : null);

/** The latest values at most every 3 s (a screen reader cannot keep up with 30 frames a second). */
export function announcer(el) {
  const said = { at: 0, frame: null, timer: null };
  const speak = () => {
    said.timer = null;
    said.at = performance.now();
    const f = said.frame;
    const named = Object.entries(f.scalars || {}).map(([k, v]) => [scalarName(k), v]).filter(([name]) => name);
    const parts = named.slice(0, 3).map(([name, v]) => `${name} ${Number.isFinite(v) ? Number(v.toPrecision(3)) : v}`);
    el.textContent = parts.length ? t('announce', { values: parts.join(', '), step: f.step }) : t('step_n', { step: f.step });
  };
  return (frame) => {
    said.frame = frame;
    if (!said.timer) said.timer = setTimeout(speak, Math.max(0, 3000 - (performance.now() - said.at)));
  };
}
