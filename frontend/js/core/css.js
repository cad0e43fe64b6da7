// A lab view's own stylesheet, loaded once; charts drawn before it applied re-measure.
export function ensureCss(href, root) {
  if (document.querySelector(`link[href="${href}"]`)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  link.onload = () => { for (const el of root.querySelectorAll('.js-plotly-plot')) window.Plotly.Plots.resize(el); };
  document.head.append(link);
}
