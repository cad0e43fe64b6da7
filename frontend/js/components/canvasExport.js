// PNG download for every panel drawn on a canvas (plotly charts have their own buttons).
import { t } from '../core/i18n.js';

function addButtons(root) {
  for (const panel of root.querySelectorAll('.panel')) {
    if (panel.querySelector('.canvas-export') || panel.querySelector('.js-plotly-plot')) continue;
    const canvas = panel.querySelector('canvas');
    if (!canvas) continue;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'canvas-export';
    b.textContent = 'PNG';
    b.setAttribute('aria-label', `${t('download_png')}: ${panel.querySelector('h3')?.textContent || ''}`);
    b.onclick = () => {
      const a = document.createElement('a');
      a.href = canvas.toDataURL('image/png');
      a.download = `${(panel.querySelector('h3')?.textContent || 'chart').replace(/[^\p{L}\p{N}]+/gu, '-')}.png`;
      a.click();
    };
    panel.prepend(b);
  }
}

/** Watch a view root and give each canvas panel a PNG button as panels appear. */
export function canvasExport(root) {
  let queued = false;
  const run = () => { queued = false; addButtons(root); };
  new MutationObserver(() => { if (!queued) { queued = true; requestAnimationFrame(run); } })
    .observe(root, { childList: true, subtree: true });
  run();
}
