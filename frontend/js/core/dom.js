// DOM writes for views that redraw on every frame: a write that changes nothing still makes
// the browser lay the page out again, so write only what changed.

/** Set el's text if it differs. */
export function setText(el, text) {
  const s = String(text ?? '');
  if (el.textContent !== s) el.textContent = s;
}
