// A stylesheet added once: a lab's (the shell adds the one its view names) or a component's.
// Charts drawn before it applied have their old sizes: plotly's measure again when it has.
import { Plotly } from './plotly.js';

export function ensureCss(href) {
  if (document.querySelector(`link[href="${href}"]`)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  link.onload = () => {
    if (Plotly) for (const el of document.querySelectorAll('.js-plotly-plot')) Plotly.Plots.resize(el);
  };
  document.head.append(link);
}
