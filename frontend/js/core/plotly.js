// plotly.js, loaded on demand: at 1.5 MB it is the page's largest script, and compiling it
// blocked the first frame. The shell asks for it once the view can use it; `Plotly` is a live
// binding (null until then) and whenPlotly queues work for when it arrives.
const SRC = '/vendor/plotly.min.js';

export let Plotly = window.Plotly || null;
let loading = null;
let arrived = null;
const ready = new Promise((resolve) => { arrived = resolve; });
if (Plotly) arrived(Plotly);

/** Start loading plotly (once); resolves with it. */
export function loadPlotly() {
  if (!loading) {
    loading = Plotly ? Promise.resolve(Plotly) : new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = SRC;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => reject(new Error(`${SRC} did not load`));
      document.head.append(s);
    });
    loading.then((P) => { Plotly = P; arrived(P); }, () => {}); // the caller hears the failure
  }
  return loading;
}

/** Run fn(Plotly) now if it is here, else when it arrives (without asking for it). */
export function whenPlotly(fn) {
  if (Plotly) fn(Plotly);
  else ready.then(fn);
}
