// A paste longer than its box's limit (an input's or textarea's maxlength) is cut by the
// browser without a word: every box on the page says so, in the page's language, under the
// box, until the text is edited again. One listener for the whole page, so every lab's box
// (real-llm's prompt, real-bert's text, transformer's phrase, seq2seq's string) has it.
import { addStrings, t } from '../core/i18n.js';

addStrings({
  en: { 'paste.cut': 'The pasted text was cut to {max} characters, this box’s limit ({n} were pasted).' },
  zh: { 'paste.cut': '粘贴的文字超出这个输入框的上限，已截成 {max} 个字符（粘贴了 {n} 个）。' },
});

const notes = new WeakMap(); // box -> its note

function noteOf(box) {
  let p = notes.get(box);
  if (!p) {
    p = document.createElement('small');
    p.className = 'count over paste-cut';
    p.setAttribute('role', 'status');
    p.style.display = 'block';
    box.after(p);
    notes.set(box, p);
  }
  return p;
}

document.addEventListener('paste', (e) => {
  const box = e.target;
  if (!(box instanceof HTMLInputElement || box instanceof HTMLTextAreaElement) || !(box.maxLength > 0)) return;
  const text = e.clipboardData ? e.clipboardData.getData('text') : '';
  const start = box.selectionStart ?? box.value.length;
  const end = box.selectionEnd ?? start;
  const room = box.maxLength - (box.value.length - (end - start));
  if (text.length <= room) return;
  // After the browser has pasted what fits (or nothing, the box full): the note, until the
  // next edit.
  setTimeout(() => {
    const p = noteOf(box);
    p.hidden = false;
    p.textContent = t('paste.cut', { max: box.maxLength.toLocaleString(), n: text.length.toLocaleString() });
    box.addEventListener('input', () => { p.hidden = true; }, { once: true });
  });
}, true);
