// Sizes each Shaomai Lab iframe on this page to its lab: an embedded lab posts
// {type: 'shaomai:height', height} whenever its height changes (presenter.js, embed mode).
// Copy this file next to your article to get the same; without it an iframe keeps its height.
addEventListener('message', (e) => {
  const m = e.data;
  if (!m || m.type !== 'shaomai:height' || !Number.isFinite(m.height)) return;
  for (const frame of document.querySelectorAll('iframe')) {
    if (frame.contentWindow === e.source) frame.style.height = `${Math.min(4000, Math.max(200, m.height))}px`;
  }
});
