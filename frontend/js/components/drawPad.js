// A drawing pad: the learner draws with mouse, pen or finger; the pad hands back the stroke
// as a small grey grid (grid × grid values 0..1, the ink fraction of each cell), throttled
// while drawing and once more when the stroke ends. What the grid means is the server's
// business (the digits lab reduces it to 8×8 counts there); the pad only samples its pixels.

export function drawPad(el, { size = 256, grid = 32, lineWidth = 20, throttleMs = 100, ink = '#1d2330', ariaLabel = '', onDraw = () => {} } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = 'draw-pad';
  canvas.width = canvas.height = size;
  canvas.style.touchAction = 'none'; // a finger draws instead of scrolling the page
  canvas.style.cursor = 'crosshair';
  canvas.setAttribute('role', 'img');
  if (ariaLabel) canvas.setAttribute('aria-label', ariaLabel);
  el.append(canvas);
  const g = canvas.getContext('2d', { willReadFrequently: true });
  let drawing = false, last = null, empty = true, timer = null, lastSent = 0;

  const toCanvas = (ev) => {
    const box = canvas.getBoundingClientRect();
    return [((ev.clientX - box.left) / box.width) * size, ((ev.clientY - box.top) / box.height) * size];
  };

  /** The ink fraction of each of grid × grid cells, rounded to 2 decimals (rows of numbers). */
  function sample() {
    const { data } = g.getImageData(0, 0, size, size);
    const cell = size / grid;
    const rows = [];
    for (let r = 0; r < grid; r++) {
      const row = new Array(grid);
      for (let c = 0; c < grid; c++) {
        let sum = 0, count = 0;
        for (let y = Math.floor(r * cell); y < Math.floor((r + 1) * cell); y++) {
          for (let x = Math.floor(c * cell); x < Math.floor((c + 1) * cell); x++) {
            sum += data[(y * size + x) * 4 + 3]; // alpha: the pad is transparent where blank
            count++;
          }
        }
        row[c] = Math.round((sum / (255 * count)) * 100) / 100;
      }
      rows.push(row);
    }
    return rows;
  }

  function emit(final) {
    clearTimeout(timer);
    timer = null;
    lastSent = performance.now();
    onDraw(sample(), { final });
  }

  function schedule() {
    if (timer) return;
    const wait = Math.max(0, throttleMs - (performance.now() - lastSent));
    timer = setTimeout(() => emit(false), wait);
  }

  function segment(a, b) {
    g.strokeStyle = ink;
    g.fillStyle = ink;
    g.lineWidth = lineWidth;
    g.lineCap = 'round';
    g.lineJoin = 'round';
    g.beginPath();
    if (a[0] === b[0] && a[1] === b[1]) {
      g.arc(a[0], a[1], lineWidth / 2, 0, 2 * Math.PI); // a tap leaves a dot
      g.fill();
    } else {
      g.moveTo(a[0], a[1]);
      g.lineTo(b[0], b[1]);
      g.stroke();
    }
  }

  canvas.addEventListener('pointerdown', (ev) => {
    if (ev.button !== 0 && ev.pointerType === 'mouse') return;
    ev.preventDefault();
    canvas.setPointerCapture(ev.pointerId);
    drawing = true;
    last = toCanvas(ev);
    segment(last, last);
    empty = false;
    schedule();
  });
  canvas.addEventListener('pointermove', (ev) => {
    if (!drawing) return;
    const p = toCanvas(ev);
    segment(last, p);
    last = p;
    schedule();
  });
  const end = (ev) => {
    if (!drawing) return;
    drawing = false;
    if (canvas.hasPointerCapture(ev.pointerId)) canvas.releasePointerCapture(ev.pointerId);
    emit(true);
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);

  return {
    el: canvas,
    get empty() { return empty; },
    sample,
    clear() {
      clearTimeout(timer);
      timer = null;
      drawing = false;
      empty = true;
      g.clearRect(0, 0, size, size);
    },
  };
}
