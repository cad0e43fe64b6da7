// "Try": a row of buttons a teacher clicks through, each setting the lab's params to a
// scenario, and an optional switch that flips one boolean param. Only the driver sees it.
import { t } from '../core/i18n.js';
import { add, el, setText } from '../core/dom.js';

/**
 * parent: where the bar goes. prefix: the lab id (strings `<prefix>.try`, `<prefix>.try_<key>`).
 * scenarios: {key: params}. toggle: {param, on, off} (string keys: the label to turn it on / off).
 * Returns {el, draw()}: call draw() on params, role and language changes.
 */
export function tryBar(parent, ctx, { prefix, scenarios, toggle = null }) {
  const bar = add(parent, 'div', 'try-bar');
  const label = add(bar, 'span', 'try-label');
  const button = (act, onclick, cls = '') => {
    const b = el('button', cls);
    b.type = 'button';
    b.dataset.act = act;
    b.onclick = onclick;
    bar.append(b);
    return b;
  };
  const tries = Object.entries(scenarios).map(([k, p]) => [k, button(`try-${k}`, () => ctx.setParams(p))]);
  const flip = toggle && button(toggle.param, () => ctx.setParams({ [toggle.param]: !ctx.params()[toggle.param] }), 'try-toggle');
  return {
    el: bar,
    draw() {
      setText(label, t(`${prefix}.try`));
      for (const [k, b] of tries) setText(b, t(`${prefix}.try_${k}`));
      if (flip) setText(flip, t(ctx.params()[toggle.param] ? toggle.off : toggle.on));
      bar.hidden = ctx.store.get('role') !== 'driver';
    },
  };
}
