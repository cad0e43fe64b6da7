// "Try this next": the lab's two or three experiments (served with its info, from
// backend/labs/experiments/) as buttons under the view. A click sends the experiment's
// params through ctx.setParams, the same `set` the params form sends, so the server
// validates it; the sentence "watch: ..." says what to look at. Only the driver sees it.
// A view that draws its own try row (tryBar) keeps it, and this row stays away.
import { addStrings, lang, pick, t } from '../core/i18n.js';
import { ensureCss } from '../core/css.js';
import { add, el, setText } from '../core/dom.js';

addStrings({
  en: { 'trynext.title': 'Try this next', 'trynext.watch': 'Watch: {what}', 'trynext.hint': 'Each button sets the params; then press play.', 'trynext.hint_live': 'Each button sets the params; the picture follows at once.' },
  zh: { 'trynext.title': '接下来试试', 'trynext.watch': '请看：{what}', 'trynext.hint': '每个按钮会设好参数，然后按播放。', 'trynext.hint_live': '每个按钮会设好参数，图会立刻跟着变。' },
});

/** after: the element the row goes below (the view). Returns {el} or null (nothing to offer). */
export function tryNext(after, ctx) {
  const items = ctx.info.experiments || [];
  if (!items.length || after.querySelector('.try-bar')) return null;
  ensureCss('/css/tryNext.css');
  const box = el('section', 'try-next');
  box.setAttribute('aria-labelledby', 'try-next-title');
  const head = add(box, 'h2', 'try-next-title');
  head.id = 'try-next-title';
  const row = add(box, 'div', 'try-next-row');
  const watch = add(box, 'p', 'try-next-watch');
  watch.setAttribute('aria-live', 'polite');
  let chosen = null;
  const buttons = items.map((x) => {
    const b = add(row, 'button');
    b.type = 'button';
    b.dataset.try = x.key;
    b.onclick = () => {
      chosen = x;
      ctx.setParams(x.params);
      draw();
    };
    return b;
  });
  const draw = () => {
    setText(head, t('trynext.title'));
    items.forEach((x, i) => {
      setText(buttons[i], pick(x.label));
      buttons[i].setAttribute('aria-pressed', String(chosen === x));
    });
    // A lab with nothing to play (real-bert, real-llm) has no play to press.
    setText(watch, chosen ? t('trynext.watch', { what: pick(chosen.watch) }) : t(ctx.info.plays === false ? 'trynext.hint_live' : 'trynext.hint'));
    watch.classList.toggle('chosen', !!chosen);
    box.hidden = ctx.store.get('role') !== 'driver' || !!ctx.store.get('readOnly');
  };
  after.after(box);
  ctx.store.on('role', draw);
  ctx.store.on('readOnly', draw);
  lang.on('lang', draw);
  draw();
  return { el: box };
}
