// A lesson beside the lab (docs/lessons.md): `lab.html?lesson=<id>`. The panel shows the
// step's text in the page's language with Back/Next; entering a step applies its directives
// through the page's own client and store (open with params, play to a step or until a
// condition, pause, select view keys, highlight, note, poll). The lesson and its step are
// view keys (`lesson`, `lesson_step`): a class follows the driver's, a late joiner lands on
// the current one. The presenter's clicker (PageDown/PageUp) and the arrows move the steps.
import { ensureCss } from './core/css.js';
import { addStrings, currentLang, lang, t } from './core/i18n.js';

ensureCss('/css/lesson.css');

addStrings({
  en: {
    'lesson.of': 'Step {k} of {n}',
    'lesson.next': 'Next ›',
    'lesson.back': '‹ Back',
    'lesson.label': 'Lesson',
    'lesson.broken': 'This lesson cannot be opened: {why}',
    'lesson.follow': 'You follow the teacher’s lesson step.',
    'lesson.keys': 'PageDown / → next step · PageUp / ← back',
  },
  zh: {
    'lesson.of': '第 {k} 步，共 {n} 步',
    'lesson.next': '下一步 ›',
    'lesson.back': '‹ 上一步',
    'lesson.label': '课程',
    'lesson.broken': '这节课打不开：{why}',
    'lesson.follow': '你正跟着老师的课程步骤。',
    'lesson.keys': 'PageDown / → 下一步 · PageUp / ← 上一步',
  },
});

const q = new URLSearchParams(location.search);
const fetchLesson = async (id, language) => {
  const res = await fetch(`/api/lessons/${encodeURIComponent(id)}?lang=${language === 'zh' ? 'zh' : 'en'}`);
  const body = await res.json().catch(() => ({}));
  return res.ok ? body : { error: body.detail || `HTTP ${res.status}` };
};

// `lab.html?lesson=<id>` names no lab (or another one): go to the lesson's lab first, before
// the page opens a session of the wrong one (this module's top-level await holds the shell).
let first = null;
if (q.get('lesson') && !q.get('join')) {
  first = await fetchLesson(q.get('lesson'), q.get('lang') || navigator.language.slice(0, 2));
  if (first.lab && first.lab !== q.get('lab')) {
    const u = new URL(location.href);
    u.searchParams.set('lab', first.lab);
    location.replace(u);
    await new Promise(() => {}); // the page is leaving
  }
}

// The lesson this page shows, in its language: polls.js draws a lesson step's poll in it.
const shown = { id: null, doc: null };

/** The poll of step `step` of lesson `id` in this page's language, if the page holds it. */
export function lessonPoll(id, step) {
  if (!shown.doc || shown.doc.error || shown.id !== id) return null;
  const d = shown.doc.steps[step]?.do.find((x) => x.kind === 'poll');
  return d ? { question: d.question, choices: d.choices || null } : null;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Mount the lesson panel (shell.js). Nothing shows until a lesson is named or followed. */
export function lesson({ store, client, info, labId }) {
  const panel = el('section', 'lesson-panel');
  panel.hidden = true;
  panel.dataset.lesson = '';
  panel.setAttribute('aria-live', 'polite');
  const head = el('p', 'lesson-head');
  const count = el('p', 'lesson-count');
  const title = el('h2', 'lesson-step-title');
  const body = el('div', 'lesson-body');
  const note = el('p', 'lesson-note');
  const nav = el('div', 'lesson-nav');
  const back = el('button', '', '');
  const next = el('button', 'primary', '');
  back.type = next.type = 'button';
  back.dataset.act = 'lesson_back';
  next.dataset.act = 'lesson_next';
  const hint = el('p', 'lesson-hint');
  nav.append(back, next);
  panel.append(head, count, title, body, note, nav, hint);
  document.querySelector('main.lab')?.before(panel);

  let doc = first && !first.error ? first : null; // the lesson in the page's language
  let id = q.get('lesson') || null;
  let k = Math.max(0, Number(q.get('lesson_step')) || 0);
  let applyOnReady = !!id && !q.get('lesson_step'); // a fresh start applies step 0 once ready
  let until = null; // a `play until` in progress: {scalar, above|below, max}
  let asked = false; // this page asked a poll that may still be open
  const driver = () => store.get('role') === 'driver';
  const following = () => store.get('role') === 'viewer';

  const clearHighlights = () => { for (const e of document.querySelectorAll('.lesson-hl')) e.classList.remove('lesson-hl'); };
  const target = (d) => {
    if (d.control) return document.querySelector(`#controls [data-act="${d.control}"], #class-tools [data-act="${d.control}"]`);
    if (d.param) { const f = document.getElementById(`param-${d.param}`); return f?.closest('.param') || f; }
    return document.querySelector(`#view ${d.view}`);
  };

  const render = () => {
    if (shown.id !== id || shown.doc !== doc) {
      Object.assign(shown, { id, doc });
      window.dispatchEvent(new Event('shaomai:lesson'));
    }
    if (!id) { panel.hidden = true; return; }
    panel.hidden = false;
    panel.dataset.lesson = id;
    head.textContent = `${t('lesson.label')} · ${doc ? doc.title[currentLang()] || doc.title.en : id}`;
    if (!doc || doc.error) {
      count.textContent = '';
      title.textContent = '';
      body.textContent = t('lesson.broken', { why: doc?.error || '…' });
      nav.hidden = true;
      return;
    }
    const n = doc.steps.length;
    k = Math.min(Math.max(0, k), n - 1);
    const step = doc.steps[k];
    panel.dataset.step = String(k);
    count.textContent = t('lesson.of', { k: k + 1, n });
    title.textContent = step.title;
    body.innerHTML = step.html; // rendered on the server from Markdown with raw HTML off
    back.textContent = t('lesson.back');
    next.textContent = t('lesson.next');
    nav.hidden = following();
    back.disabled = k === 0;
    next.disabled = k === n - 1;
    hint.textContent = following() ? t('lesson.follow') : t('lesson.keys');
    clearHighlights();
    const notes = step.do.filter((d) => d.kind === 'note').map((d) => d.text);
    note.hidden = !notes.length;
    note.textContent = notes.join(' ');
    for (const d of step.do.filter((x) => x.kind === 'highlight')) target(d)?.classList.add('lesson-hl');
  };

  // The directives that change the run: only the driver (or a learner alone) sends them.
  const apply = (forward) => {
    const step = doc?.steps[k];
    if (!step || !driver()) return;
    until = null;
    let now = store.get('step') || 0; // an `open` in this step starts the run again at 0
    // Predictions are in before the model moves (as the poll's own "Run it").
    if (forward && asked && step.do.some((d) => d.kind === 'play' || d.kind === 'open')) {
      client.send({ type: 'poll_close' });
      asked = false;
    }
    for (const d of step.do) {
      if (d.kind === 'select') for (const [key, v] of Object.entries(d.keys)) store.set(key, v);
      if (!forward) continue; // back: the view again, not the run
      if (d.kind === 'open') {
        if (d.lab !== labId || d.seed !== (store.get('seed') || 0)) {
          const u = new URL(location.href);
          u.search = '';
          for (const [key, v] of Object.entries({ lab: d.lab, seed: d.seed, lesson: id, lesson_step: k, lang: currentLang() })) u.searchParams.set(key, String(v));
          location.assign(u);
          return;
        }
        const defaults = Object.fromEntries(Object.entries(info.schema?.properties || {}).filter(([, p]) => 'default' in p).map(([key, p]) => [key, p.default]));
        client.send({ type: 'set', params: { ...defaults, ...d.params } });
        client.control('reset');
        now = 0;
      } else if (d.kind === 'play' && d.to) {
        if (d.to > now) client.control('step', { count: d.to - now });
        now = Math.max(now, d.to);
      } else if (d.kind === 'play') {
        until = { ...d.until, max: d.max };
        client.control('play');
      } else if (d.kind === 'pause') client.control('pause');
      else if (d.kind === 'poll') {
        const kind = d.choices ? { choices: d.choices, ...(d.answer != null ? { answer: d.answer } : {}) } : { numeric: d.numeric };
        client.send({ type: 'poll', question: d.question, ...kind, lesson: { id, step: k } });
        asked = true;
      }
    }
  };

  const go = (to) => {
    if (!doc || doc.error || following()) return;
    const forward = to > k;
    k = Math.min(Math.max(0, to), doc.steps.length - 1);
    store.set('lesson_step', k); // into the URL and to the class (a view key)
    render();
    apply(forward);
  };
  back.onclick = () => go(k - 1);
  next.onclick = () => go(k + 1);

  // The clicker and the arrows move the lesson (before presenter.js's step/scrub keys).
  window.addEventListener('keydown', (e) => {
    if (!id || !doc || following() || e.shiftKey || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest?.('input, textarea, select, [contenteditable]')) return;
    const dir = { PageDown: 1, ArrowRight: 1, PageUp: -1, ArrowLeft: -1 }[e.key];
    if (!dir) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    go(k + dir);
  }, true);

  // `play until`: the scalars say when the condition holds (or the step cap is reached).
  const watch = (m) => {
    if (!until || !driver()) return;
    for (const r of m.rows || []) {
      const v = (r.values || r)[until.scalar];
      const met = typeof v === 'number' && (until.above !== undefined ? v > until.above : v < until.below);
      if (met || r.step >= until.max) { until = null; client.control('pause'); return; }
    }
  };
  client.on('scalars', watch);
  client.on('history', watch); // several steps' rows at once while a run goes flat out

  const load = async (lessonId) => {
    id = lessonId;
    doc = lessonId ? await fetchLesson(lessonId, currentLang()) : null;
    render();
  };
  client.on('ready', () => {
    if (driver() && id) {
      store.set('lesson', id);
      store.set('lesson_step', k);
      if (applyOnReady) { applyOnReady = false; apply(true); }
    }
    render();
  });
  // A student follows the driver's lesson and step (classroom.js sets these view keys).
  store.on('lesson', (v) => { if (following() && v && v !== id) load(v); });
  store.on('lesson_step', (v) => { if (following() && Number.isInteger(v) && v !== k) { k = v; render(); } });
  lang.on('lang', () => { if (id) load(id); });
  if (id && !doc) load(id); // a student's reload: the URL names it
  render();
}
