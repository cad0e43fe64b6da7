// Clock faces on one canvas: each clock shows one or more hands, each a 2-D vector given by
// the caller (e.g. the (cos, sin) pair of one frequency of a position encoding). Drawn on a
// canvas because it is redrawn many times a second while a position is animated.

/**
 * el: a container. Returns {draw(clocks, {scale}), resize()}.
 * clocks: [{label, hands: [{x, y, color, width?}], trail?: [{x, y}]}]; vectors are divided by
 * `scale` (default: the longest hand of all clocks, or of each clock with perClock), so a
 * unit vector reaches the rim.
 */
export function clockHands(el, { minSize = 54, maxSize = 92 } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = 'clock-hands';
  canvas.setAttribute('role', 'img');
  el.append(canvas);
  let lastArgs = null;

  function draw(clocks, { scale = null, label = '', perClock = false } = {}) {
    lastArgs = [clocks, { scale, label, perClock }];
    canvas.setAttribute('aria-label', label);
    const width = Math.max(200, el.clientWidth || 400);
    const n = clocks.length || 1;
    // Big clocks when few; shrink (down to minSize) to keep many clocks within about 3 rows.
    let size = maxSize;
    if (Math.ceil(n / Math.floor(width / size)) > 3) size = Math.max(minSize, Math.floor(width / Math.ceil(n / 3)));
    const cols = Math.max(1, Math.floor(width / size));
    const rows = Math.ceil(n / cols);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(rows * size * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${rows * size}px`;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, rows * size);
    let bigAll = scale;
    if (!bigAll) {
      bigAll = 0;
      for (const c of clocks) for (const h of c.hands) bigAll = Math.max(bigAll, Math.hypot(h.x, h.y));
      bigAll = bigAll || 1;
    }
    const fg = getComputedStyle(document.body).color;
    clocks.forEach((c, i) => {
      const big = perClock && !scale ? Math.max(1e-12, ...c.hands.map((h) => Math.hypot(h.x, h.y))) : bigAll;
      const cx = (i % cols) * size + size / 2;
      const cy = Math.floor(i / cols) * size + size / 2 - 6;
      const r = size / 2 - 12;
      ctx.strokeStyle = '#c9c4b8';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.arc(cx, cy, r, 0, 2 * Math.PI);
      ctx.stroke();
      if (c.trail && c.trail.length) {
        ctx.fillStyle = 'rgba(90, 100, 115, 0.35)';
        for (const p of c.trail) {
          ctx.beginPath();
          ctx.arc(cx + (p.x / big) * r, cy - (p.y / big) * r, 1.3, 0, 2 * Math.PI);
          ctx.fill();
        }
      }
      for (const h of c.hands) {
        ctx.strokeStyle = h.color || fg;
        ctx.lineWidth = h.width || 2.5;
        ctx.lineCap = 'round';
        ctx.beginPath();
        ctx.moveTo(cx, cy);
        ctx.lineTo(cx + (h.x / big) * r, cy - (h.y / big) * r); // y up, as on paper
        ctx.stroke();
      }
      ctx.fillStyle = fg;
      ctx.beginPath();
      ctx.arc(cx, cy, 2, 0, 2 * Math.PI);
      ctx.fill();
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(c.label, cx, cy + r + 11);
    });
  }

  return {
    el: canvas,
    draw,
    resize() { if (lastArgs) draw(...lastArgs); },
  };
}
