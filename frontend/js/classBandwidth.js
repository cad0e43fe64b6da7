// The class's bandwidth, for the teacher: bytes/s the server sends the class and each
// student (its `class_stats`, every 2 s), and the low-bandwidth switch. The switch is the
// view key `low`: the class follows it like the selected head, and each viewer's page
// subscribes at quality low (core/subscription.js; docs/streams.md). Below it, when joins
// from the teacher's network are being slowed by wrong codes, how many (`/api/join-stats`,
// docs/security.md): a prankster guessing codes shows here before the class complains.
import { ensureCss } from './core/css.js';
import { addStrings, t } from './core/i18n.js';

addStrings({
  en: {
    'bw.title': 'Class bandwidth',
    'bw.figure': 'students: {n} · the class {total}/s · each {each}/s (most {max}/s)',
    'bw.none': 'No students yet',
    'bw.low': 'Low bandwidth',
    'bw.low_hint': 'Students get half-resolution maps, at most 5 frames a second',
    'bw.joins': 'Joins from this network, last minute: {wrong} wrong codes · {waited} waited (up to {wait} s) · {refused} turned away',
    'bw.joins_hint': 'Wrong codes from this network slow everyone’s joins down; right codes still get in. If it goes on, ask the class to stop trying codes.',
  },
  zh: {
    'bw.title': '全班带宽',
    'bw.figure': '学生 {n} 名 · 全班 {total}/秒 · 每人 {each}/秒（最多 {max}/秒）',
    'bw.none': '还没有学生加入',
    'bw.low': '低带宽模式',
    'bw.low_hint': '学生收到一半分辨率的注意力图，每秒最多 5 帧',
    'bw.joins': '本网络最近一分钟的加入：输错课堂码 {wrong} 次 · 等待 {waited} 次（最长 {wait} 秒）· 未能加入 {refused} 次',
    'bw.joins_hint': '这个网络输错课堂码时，所有人加入都会变慢；正确的课堂码仍能加入。如果一直这样，请提醒学生不要乱试课堂码。',
  },
});

const JOIN_STATS_MS = 5000; // how often a sharing teacher's page asks /api/join-stats

/** Bytes as the page says them: 812 B, 38.4 KB, 2.1 MB (1 KB = 1000 B). */
export function bytesText(n) {
  if (n < 1000) return `${Math.round(n)} B`;
  if (n < 1e6) return `${(n / 1000).toFixed(n < 1e4 ? 1 : 0)} KB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

/** Mount the figure and the switch in each of `hosts`; shown to a driver once shared. */
export function classBandwidth(hosts, { client, store }) {
  ensureCss('/css/class-band.css');
  let last = null;
  const parts = hosts.map((host) => {
    const el = document.createElement('div');
    el.className = 'class-band';
    el.hidden = true;
    el.innerHTML = '<strong class="bw-title"></strong> <span class="bw-figure" aria-live="polite"></span> <label class="bw-switch"><input type="checkbox"> <span class="bw-low"></span></label> <span class="bw-joins" role="status" hidden></span>';
    const box = el.querySelector('input');
    box.onchange = () => store.set('low', box.checked); // classroom.js sends it to the class
    host.insertBefore(el, host.querySelector(':scope > .close')); // above a card's Close
    return { el, box };
  });
  const render = () => {
    const show = store.get('role') === 'driver' && !!store.get('shareCode');
    for (const { el, box } of parts) {
      el.hidden = !show;
      el.querySelector('.bw-title').textContent = t('bw.title');
      el.querySelector('.bw-low').textContent = t('bw.low');
      el.querySelector('.bw-switch').title = t('bw.low_hint');
      box.checked = !!store.get('low');
      const fig = el.querySelector('.bw-figure');
      fig.textContent = last && last.viewers
        ? t('bw.figure', { total: bytesText(last.bytes_per_s), n: last.viewers, each: bytesText(last.per_viewer), max: bytesText(last.max_viewer) })
        : t('bw.none');
      fig.dataset.bytesPerS = last ? String(last.bytes_per_s) : '0'; // for tests
      const joins = el.querySelector('.bw-joins');
      const j = joinStats;
      joins.hidden = !show || !j || !(j.wrong || j.waited || j.refused);
      if (j) {
        joins.textContent = t('bw.joins', { wrong: j.wrong, waited: j.waited, wait: Math.round(j.longest_wait_s), refused: j.refused });
        joins.title = t('bw.joins_hint');
        Object.assign(joins.dataset, { wrong: j.wrong, waited: j.waited, refused: j.refused }); // for tests
      }
    }
  };
  // Joins from this network being slowed: asked while this page drives a shared session.
  let joinStats = null;
  let polling = null;
  const askJoins = async () => {
    try {
      const r = await fetch('/api/join-stats');
      if (r.ok) { joinStats = await r.json(); render(); }
    } catch { /* offline: the next try */ }
  };
  const poll = () => {
    const want = store.get('role') === 'driver' && !!store.get('shareCode');
    if (want && !polling) { askJoins(); polling = setInterval(askJoins, JOIN_STATS_MS); }
    if (!want && polling) { clearInterval(polling); polling = null; }
  };
  client.on('class_stats', (m) => { last = m; render(); });
  // The switch outlives a reload of the teacher's tab (a driver is not sent the view state).
  const saved = () => `shaomai:low:${client.session}`;
  client.on('ready', (m) => { if (m.role === 'driver' && sessionStorage.getItem(saved()) === '1') store.set('low', true); });
  store.on('low', (v) => { if (client.session && store.get('role') === 'driver') sessionStorage.setItem(saved(), v ? '1' : '0'); });
  for (const key of ['role', 'shareCode', 'low']) store.on(key, render);
  for (const key of ['role', 'shareCode']) store.on(key, poll);
  render();
  poll();
  return { relabel: render };
}
