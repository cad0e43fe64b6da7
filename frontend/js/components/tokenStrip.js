// A row of token chips. Hovering one sets the store's `hoverToken` (every view highlights
// the same position); the hovered chip is highlighted whoever set it. Each chip can carry a
// small bar (e.g. the probability the model gives the true next token) and a muted style
// (e.g. ungraded prompt positions).
import { setText } from '../core/dom.js';

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
     * titles (tooltip per chip), extra (class per chip).
     */
    show(tokens, { values = null, muted = null, titles = null, extra = null } = {}) {
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
      });
      mark(store.get(key));
    },
    clear() { el.replaceChildren(); chips = []; },
  };
}
