// A bar chart for small labelled vectors: probabilities, per-parameter gradients.
import { baseLayout, CONFIG, Plotly, throttleFrame } from './plot.js';

export function bars(el, { title = '', logY = false, color = '#2f6fdf', yTitle = '', range = null }) {
  const layout = baseLayout({ title, yaxis: { type: logY ? 'log' : 'linear', title: { text: yTitle }, range, exponentformat: 'power' }, xaxis: { type: 'category' } });
  Plotly.newPlot(el, [{ type: 'bar', x: [], y: [], marker: { color } }], layout, CONFIG);
  const draw = throttleFrame((labels, values, colors) => {
    Plotly.restyle(el, { x: [labels], y: [values], 'marker.color': [colors || color] }, [0]);
  });
  return { el, draw };
}
