// A row of token chips. Hovering one sets the store's `hoverToken` (every view highlights
// the same position); the hovered chip is highlighted whoever set it. Each chip can carry a
// small bar (e.g. the probability the model gives the true next token) and a muted style
// (e.g. ungraded prompt positions).
//
// A byte-level BPE token (real-llm) may hold only part of a character: the server labels it
// with the character it helps form and sends its bytes as `info` ({hex, state, parts}; null
// for plain ASCII). `pieceChip` / `pieceTitle` / `pieceMark` draw that; nothing is decoded
// here.
import { setText } from '../core/dom.js';
import { t } from '../core/i18n.js';

/** A token's bytes and which piece of which character it is, as hover lines ('' if plain). */
export function pieceNote(info) {
  if (!info) return '';
  if (info.state === 'pending') return t('tok.pending', { hex: info.hex });
  if (info.state === 'bytes') return t('tok.broken', { hex: info.hex });
  const lines = [t('tok.bytes', { hex: info.hex })];
  for (const p of info.parts || []) lines.push(t('tok.part', { char: p.char, size: p.size, all: p.hex, k: p.k, n: p.n }));
  return lines.join('\n');
}

/** The hover text of a token: its label, then its bytes and piece (pieceNote). */
export const pieceTitle = (label, info) => (info ? `${label}\n${pieceNote(info)}` : label);

/** The small "k/n" mark of a token that is a piece of a character ('' otherwise). */
export const pieceMark = (info) => (info && info.parts ? info.parts.map((p) => `${p.k}/${p.n}`).join(' ') : '');

/** Sets a chip's class (tp-split, tp-pending, tp-bytes), its text and "k/n" mark, and title. */
export function pieceChip(chip, label, info) {
  for (const c of ['tp-whole', 'tp-split', 'tp-pending', 'tp-bytes']) chip.classList.toggle(c, !!info && info.state === c.slice(3));
  const mark = pieceMark(info);
  chip.replaceChildren(label);
  if (mark) {
    const sub = document.createElement('sub');
    sub.className = 'tp-k';
    sub.textContent = mark;
    chip.append(sub);
  }
  chip.title = pieceTitle(label, info);
  return chip;
}

export function tokenStrip(el, { store, key = 'hoverToken' }) {
  el.classList.add('token-strip');
  let chips = [];
  const mark = (k) => chips.forEach((c, i) => c.classList.toggle('hot', i === k));

  el.addEventListener('mouseover', (ev) => {
    const chip = ev.target.closest('.tok');
    if (chip && el.contains(chip)) store.set(key, Number(chip.dataset.i));
  });
  el.addEventListener('mouseleave', () => store.set(key, null));
  store.on(key, mark);

  return {
    el,
    /**
     * tokens: strings. opts: values (0..1, a bar under each chip), muted (bool per chip),
     * titles (tooltip per chip), extra (class per chip), pieces (a byte-level token's info
     * per chip, from the server: its bytes on hover, part of a character styled).
     */
    show(tokens, { values = null, muted = null, titles = null, extra = null, pieces = null } = {}) {
      if (chips.length !== tokens.length) {
        el.replaceChildren();
        chips = tokens.map((_, i) => {
          const c = document.createElement('span');
          c.className = 'tok';
          c.dataset.i = String(i);
          c.innerHTML = '<span class="tok-text"></span><span class="tok-bar"><i></i></span>';
          el.append(c);
          return c;
        });
      }
      tokens.forEach((tok, i) => {
        const c = chips[i];
        setText(c.firstChild, tok);
        c.classList.toggle('muted', !!(muted && muted[i]));
        const cls = c.className.replace(/ x-\S+/g, '') + (extra && extra[i] ? ` x-${extra[i]}` : '');
        if (c.className !== cls) c.className = cls;
        const bar = c.lastChild;
        bar.hidden = !values;
        if (values) bar.firstChild.style.width = `${Math.round(Math.max(0, Math.min(1, values[i])) * 100)}%`;
        c.title = titles ? titles[i] : `${i}: ${tok}`;
        const info = pieces && pieces[i];
        for (const st of ['whole', 'split', 'pending', 'bytes']) c.classList.toggle(`tp-${st}`, !!info && info.state === st);
        if (info) {
          pieceChip(c.firstChild, tok, info);
          c.title = `${i}: ${c.firstChild.title}`;
        }
      });
      mark(store.get(key));
    },
    clear() { el.replaceChildren(); chips = []; },
  };
}
