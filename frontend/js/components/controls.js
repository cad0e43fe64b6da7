// The controls bar: play/pause, step, step ×10, reset, speed. Emits actions; shows state.
import { t } from '../core/i18n.js';

const SPEEDS = [1, 5, 20, 100, 500, 2000];

export function controls(el, { onAction }) {
  el.classList.add('controls');
  el.setAttribute('role', 'toolbar');
  el.innerHTML = `
    <button type="button" data-act="play" class="primary"></button>
    <button type="button" data-act="step" data-i18n="step" data-i18n-title="step_hint"></button>
    <button type="button" data-act="step10" data-i18n="step10"></button>
    <button type="button" data-act="reset" data-i18n="reset"></button>
    <label class="speed"><span data-i18n="speed"></span>
      <select data-act="speed">${SPEEDS.map((s) => `<option value="${s}">${s}</option>`).join('')}</select>
      <span data-i18n="steps_per_s"></span></label>
    <span class="state" aria-live="polite"></span>`;
  const noPlay = Object.assign(document.createElement('span'), { className: 'no-play', hidden: true });
  noPlay.dataset.i18n = 'no_play';
  el.prepend(noPlay);
  const play = el.querySelector('[data-act=play]');
  const speed = el.querySelector('[data-act=speed]');
  const stateEl = el.querySelector('.state');
  speed.value = '100';
  let state = 'paused';
  let plays = true;
  let following = false;
  // An embed's `controls=` may leave some out for good (presenter.js marks them embedOff).
  const show = () => {
    for (const a of ['play', 'step', 'step10', 'reset', 'speed']) {
      const c = el.querySelector(`[data-act=${a}]`).closest('button, label');
      c.hidden = !plays || following || c.dataset.embedOff === '1';
    }
    stateEl.hidden = !plays;
  };
  const send = (action, extra) => onAction(action, extra);
  play.onclick = () => (state === 'playing' ? send('pause') : send('play', { speed: Number(speed.value) }));
  el.querySelector('[data-act=step]').onclick = () => send('step', { count: 1 });
  el.querySelector('[data-act=step10]').onclick = () => send('step', { count: 10 });
  el.querySelector('[data-act=reset]').onclick = () => send('reset');
  speed.onchange = () => { if (state === 'playing') send('play', { speed: Number(speed.value) }); };
  const render = () => {
    play.textContent = state === 'playing' ? `❚❚ ${t('pause')}` : `▶ ${t('play')}`;
    play.setAttribute('aria-pressed', String(state === 'playing'));
  };
  render();
  return {
    el,
    setStep(step) { stateEl.textContent = `${t(`state_${state}`)} · ${t('step_n', { step })}`; },
    setState(s, step) {
      state = s;
      render();
      stateEl.textContent = `${t(`state_${s}`)} · ${t('step_n', { step })}`;
      stateEl.dataset.state = s;
    },
    /** Play, step and speed only where they do something (the lab's catalog `plays`);
     *  elsewhere a line says there is nothing to play. */
    setPlays(on) {
      plays = on;
      show();
      noPlay.hidden = on;
      // Nothing to play: no Reset, no "Paused · step 0", no timeline (app.css hides the row).
      document.body.classList.toggle('no-play', !on);
    },
    /** ro: the buttons do nothing here. follower: nor will they (a class's student, a
     *  replay): they leave the dock rather than sit there disabled (a phone's first screen). */
    setReadOnly(ro, follower = false) {
      for (const b of el.querySelectorAll('button, select')) b.disabled = ro;
      following = follower;
      show();
    },
    get speed() { return Number(speed.value); },
    togglePlay() { play.click(); },
    relabel: render,
  };
}
