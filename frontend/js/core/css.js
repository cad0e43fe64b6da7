// A stylesheet added once: a lab's (the shell adds the one its view names) or a component's.
// Charts drawn before it applied have their old sizes: plotly's measure again when it has.
// The promise settles when the sheet has applied (or failed to load): the shell builds a
// view after its own sheet, so its first layout and canvas sizes are the styled ones.
import { Plotly } from './plotly.js';

const loads = new Map(); // href → Promise

export function ensureCss(href) {
  if (loads.has(href)) return loads.get(href);
  if (document.querySelector(`link[href="${href}"]`)) return Promise.resolve(true); // the page's own
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  const loaded = new Promise((resolve) => {
    link.onload = () => {
      if (Plotly) for (const el of document.querySelectorAll('.js-plotly-plot')) Plotly.Plots.resize(el);
      resolve(true);
    };
    link.onerror = () => resolve(false);
  });
  loads.set(href, loaded);
  document.head.append(link);
  return loaded;
}
