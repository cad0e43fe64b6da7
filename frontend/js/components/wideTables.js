// A table wider than its panel scrolls sideways inside it (app.css), which a learner does not
// see: its cut columns look like the table's end. Every such scroller in the view gets a
// visible affordance, shadows at the edges it can scroll towards (data-scrolls-x="1"), and
// loses it once it fits.
const SHADE = 'rgba(0, 0, 0, 0.28)';
const covered = new WeakSet();

function mark(box) {
  const over = box.scrollWidth > box.clientWidth + 1;
  const was = box.dataset.scrollsX === '1';
  if (over === was) return;
  if (!over) {
    delete box.dataset.scrollsX;
    box.style.removeProperty('background');
    return;
  }
  box.dataset.scrollsX = '1';
  // Scroll shadows: the page-coloured covers move with the content (local), the shadows stay
  // at the box's edges (scroll), so an edge shows a shadow only while there is more past it.
  const bg = getComputedStyle(document.body).backgroundColor || '#fff';
  box.style.background = [
    `linear-gradient(to right, ${bg} 30%, transparent) left center / 40px 100% no-repeat local`,
    `linear-gradient(to left, ${bg} 30%, transparent) right center / 40px 100% no-repeat local`,
    `radial-gradient(farthest-side at 0 50%, ${SHADE}, transparent) left center / 14px 100% no-repeat scroll`,
    `radial-gradient(farthest-side at 100% 50%, ${SHADE}, transparent) right center / 14px 100% no-repeat scroll`,
  ].join(', ');
}

/** The boxes that scroll a table sideways: the table itself (display: block on a phone) or
 *  a wrapper of it inside the view. */
function scrollers(view) {
  const out = new Set();
  for (const table of view.querySelectorAll('table')) {
    for (let e = table; e && e !== view; e = e.parentElement) {
      const ox = getComputedStyle(e).overflowX;
      if (ox === 'auto' || ox === 'scroll') out.add(e);
    }
  }
  return out;
}

export function watchWideTables(view = document.getElementById('view')) {
  if (!view) return;
  let due = 0;
  const sizes = new ResizeObserver(() => check());
  // At most a few times a second: a playing lab changes its view's DOM every frame.
  const check = () => {
    if (due) return;
    due = setTimeout(() => {
      due = 0;
      for (const box of scrollers(view)) {
        if (!covered.has(box)) { covered.add(box); sizes.observe(box); }
        mark(box);
      }
    }, 250);
  };
  new MutationObserver(check).observe(view, { childList: true, subtree: true, characterData: true });
  sizes.observe(view);
  check();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => watchWideTables());
else watchWideTables();
