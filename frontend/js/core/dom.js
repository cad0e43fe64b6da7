// DOM writes for views that redraw on every frame: a write that changes nothing still makes
// the browser lay the page out again, so write only what changed.

/** Set el's text if it differs. */
export function setText(el, text) {
  const s = String(text ?? '');
  if (el.textContent !== s) el.textContent = s;
}

/** A new element with a class and text (either may be empty): the views' one helper. */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

/** `el`, appended to parent. */
export function add(parent, tag, cls, text) {
  const e = el(tag, cls, text);
  parent.append(e);
  return e;
}
