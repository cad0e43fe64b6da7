// The byte counter of a paste box, one for every lab (the gpt lab's text param in the param
// form, the tokenizer's paste box): the text's UTF-8 bytes (what the websocket carries)
// counted as it is typed, before anything is sent. Text over the limit stays in the box
// (never cut, never sent) and the counter says the limit in the page's language.
import { t } from '../core/i18n.js';
import { bytesOf } from '../core/notices.js';

// The most a pasted text may be, in UTF-8 bytes (the websocket's 256 KiB message cap, with
// room for the rest of the message).
export const MAX_TEXT_BYTES = 200_000;

/**
 * area: the textarea. max: its limit in bytes (at most MAX_TEXT_BYTES; a lab's server may say
 * a lower one later: setMax), maxChars: a character limit too (a schema's maxLength).
 * Returns {el (the counter line), update() -> whether the text fits, setMax(n), relabel(),
 * message (the counter's sentence), fits}.
 */
export function byteCounter(area, { max = MAX_TEXT_BYTES, maxChars = null, className = '' } = {}) {
  const el = document.createElement('small');
  el.className = `count byte-count ${className}`.trim();
  el.setAttribute('aria-live', 'polite');
  let limit = Math.min(max ?? MAX_TEXT_BYTES, MAX_TEXT_BYTES);
  let fits = true;
  const update = () => {
    const n = bytesOf(area.value);
    fits = n <= limit && !(maxChars && [...area.value].length > maxChars);
    el.classList.toggle('over', !fits);
    el.textContent = !fits
      ? t('note.too_many_bytes', { n: n.toLocaleString(), max: limit.toLocaleString(), kb: Math.round(limit / 1000) })
      : area.value ? t('note.byte_count', { n: n.toLocaleString(), max: limit.toLocaleString() }) : '';
    return fits;
  };
  area.addEventListener('input', update);
  update();
  return {
    el,
    update,
    relabel: update,
    setMax(n) { if (Number.isFinite(n) && n > 0) limit = Math.min(n, MAX_TEXT_BYTES); return update(); },
    get fits() { return fits; },
    get message() { return el.textContent; },
  };
}
