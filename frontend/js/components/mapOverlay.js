// The enlarged map of a mapGrid: a panel over the page that never blocks it. It closes with
// its × button (44 px), Escape, or a click outside it on nothing that acts (a click on play,
// step, the timeline or a form control does its job and the map stays); it sits in the part
// of the screen the page's controls leave free (the phone's sticky bar, the toolbar and the
// timeline stay visible and usable) and fits that part, down to a 390 × 844 phone.
import { t } from '../core/i18n.js';

// What a click may land on without closing the map: anything that acts.
const ACTS = 'button, input, select, textarea, a, label, summary, [role=button], [role=slider], [contenteditable], .mg-zoom-box';
// The page's controls the map must not cover (lab.html's dock: toolbar and timeline).
const CONTROLS = '.dock > .toolbar, .dock > .timeline-row, header.top';
const MARGIN = 8;

/**
 * host: where the panel's element goes. opts: onClose() (the ×, Escape, a click outside),
 * keep (elements whose clicks are the caller's own: the grid's canvas), avoid (a selector of
 * the controls to leave uncovered). Returns {el, box, canvas, title, closeBtn, show(), hide(),
 * room() -> {w, h} (CSS px a map and its labels may take), relabel()}.
 */
export function mapOverlay(host, { onClose, keep = [], avoid = CONTROLS } = {}) {
  const el = document.createElement('div');
  el.className = 'mg-zoom';
  el.hidden = true;
  el.innerHTML = '<div class="mg-zoom-box" role="dialog" aria-modal="false"><div class="mg-zoom-head"><b></b><button type="button" class="mg-close">×</button></div><canvas></canvas></div>';
  const box = el.querySelector('.mg-zoom-box');
  const title = el.querySelector('b');
  title.id = `mg-title-${Math.random().toString(36).slice(2, 8)}`;
  box.setAttribute('aria-labelledby', title.id);
  const closeBtn = el.querySelector('.mg-close');
  const canvas = el.querySelector('canvas');
  host.append(el);
  let before = null; // the element focused before the map opened: focus returns there

  /** The tallest band of the viewport no control covers (the controls visible now). */
  function band() {
    const W = window.innerWidth, H = window.innerHeight;
    const cuts = [...document.querySelectorAll(avoid)]
      .map((c) => c.getBoundingClientRect())
      .filter((r) => r.width && r.height && r.bottom > 0 && r.top < H && r.right > 0 && r.left < W)
      .sort((a, b) => a.top - b.top);
    let best = { top: 0, bottom: H }, at = 0, bestH = -1;
    for (const r of [...cuts, { top: H, bottom: H }]) {
      if (r.top - at > bestH) { bestH = r.top - at; best = { top: at, bottom: r.top }; }
      at = Math.max(at, r.bottom);
    }
    return best;
  }
  function place() {
    if (el.hidden) return;
    const b = band();
    el.style.top = `${Math.round(b.top + MARGIN)}px`; // CSSOM: allowed by the CSP
    el.style.height = `${Math.max(0, Math.round(b.bottom - b.top - 2 * MARGIN))}px`;
  }
  /** The room a map and its labels may take inside the panel. */
  function room() {
    const b = band();
    const head = 44 + 24; // the title row and the panel's padding
    return { w: Math.min(window.innerWidth - 2 * MARGIN, 1100) - 24, h: b.bottom - b.top - 2 * MARGIN - head };
  }

  const close = () => onClose?.();
  closeBtn.onclick = close;
  const onKey = (ev) => { if (ev.key === 'Escape' && !el.hidden) close(); };
  const onClick = (ev) => {
    if (el.hidden || !ev.target.isConnected) return;
    if (ev.target.closest(ACTS) || keep.some((k) => k === ev.target || k.contains(ev.target))) return;
    close();
  };
  document.addEventListener('keydown', onKey);
  document.addEventListener('click', onClick);
  window.addEventListener('resize', place);
  window.addEventListener('scroll', place, { passive: true });

  return {
    el, box, canvas, title, closeBtn, room,
    show() {
      if (el.hidden) before = document.activeElement;
      el.hidden = false;
      place();
      closeBtn.focus({ preventScroll: true });
    },
    hide() {
      if (el.hidden) return;
      el.hidden = true;
      if (box.contains(document.activeElement) && before && before.isConnected) before.focus({ preventScroll: true });
      before = null;
    },
    relabel() { closeBtn.setAttribute('aria-label', t('mg.close')); },
  };
}
