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
    'lesson.show': 'Read',
    'lesson.hide': 'Fold',
  },
  zh: {
    'lesson.of': '第 {k} 步，共 {n} 步',
    'lesson.next': '下一步 ›',
    'lesson.back': '‹ 上一步',
    'lesson.label': '课程',
    'lesson.broken': '这节课打不开：{why}',
    'lesson.follow': '你正跟着老师的课程步骤。',
    'lesson.keys': 'PageDown / → 下一步 · PageUp / ← 上一步',
    'lesson.show': '展开',
    'lesson.hide': '收起',
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

// The mounted lesson's hooks for polls.js (set by lesson()).
let runIt = () => false;
let revealPending = () => false;
/** "Run it" on poll `pl` ({id, step} of the lesson that asked): true when the lesson ran it. */
export const lessonRunIt = (pl) => runIt(pl);
/** True while the lesson holds the answer of its poll until the run shows it. */
export const lessonRevealPending = (pl) => revealPending(pl);

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
  // A follower's phone: a step's text shows its first lines, and folds to its title once
  // read (the run started, or the step's poll closed), so the picture being run is on the
  // first screen (the projector shows the whole text); a tap shows it all.
  const fold = el('button', 'lesson-fold');
  fold.type = 'button';
  fold.dataset.act = 'lesson_fold';
  const titleRow = el('div', 'lesson-title-row');
  titleRow.append(title, fold);
  nav.append(back, next);
  panel.append(head, count, titleRow, body, note, nav, hint);
  document.querySelector('main.lab')?.before(panel);

  let doc = first && !first.error ? first : null; // the lesson in the page's language
  let id = q.get('lesson') || null;
  let k = Math.max(0, Number(q.get('lesson_step')) || 0);
  let applyOnReady = !!id && !q.get('lesson_step'); // a fresh start applies step 0 once ready
  let until = null; // a `play until` in progress: {scalar, above|below, max}
  let asked = false; // this page asked a poll that may still be open
  const driver = () => store.get('role') === 'driver';
  const following = () => store.get('role') === 'viewer';
  const phone = matchMedia('(max-width: 760px)');
  let read = false; // this step's text has had its time: the run moved or its poll closed
  let unfolded = null; // the follower's own choice for this step (null: none yet)
  let foldStep = -1;
  const folds = () => following() && phone.matches;
  const setFold = () => {
    if (foldStep !== k) { foldStep = k; read = store.get('state') === 'playing'; unfolded = null; }
    // Unread, the text shows its first lines (the rest a tap away); read, the title alone.
    const mode = !folds() || unfolded === true ? '' : unfolded === false || read ? '1' : 'clamp';
    const folded = mode !== '';
    panel.dataset.folded = mode;
    fold.hidden = !folds() || !id || !doc || !!doc.error;
    fold.textContent = folded ? `${t('lesson.show')} ▾` : `${t('lesson.hide')} ▴`;
    fold.setAttribute('aria-expanded', String(!folded));
  };
  fold.onclick = () => { unfolded = panel.dataset.folded !== ''; setFold(); };
  const markRead = () => { if (!read && folds()) { read = true; setFold(); } };
  store.on('state', (v) => { if (v === 'playing') markRead(); });
  window.addEventListener('shaomai:poll', (e) => {
    const p = e.detail;
    if (p && !p.open && p.lesson && p.lesson.id === id && p.lesson.step === k) markRead();
  });
  phone.addEventListener('change', () => setFold());

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
    head.textContent = `${t('lesson.label')} · ${doc?.title ? doc.title[currentLang()] || doc.title.en : id}`;
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
    // A note `when: class` ("Vote on your phone") is for a class: a learner alone has no phone to vote on.
    const inClass = following() || !!store.get('shareCode');
    const notes = step.do.filter((d) => d.kind === 'note' && (d.when !== 'class' || inClass)).map((d) => d.text);
    note.hidden = !notes.length;
    note.textContent = notes.join(' ');
    for (const d of step.do.filter((x) => x.kind === 'highlight')) target(d)?.classList.add('lesson-hl');
    setFold();
  };

  // The directives that change the run: only the driver (or a learner alone) sends them.
  // A step's `play`/`pause` after its `poll` wait for the poll's "Run it" (predict, then
  // run); a lesson's `answer` is revealed when the run reaches the play's target (m3): it
  // was marked the moment voting closed, before the picture showed it.
  let deferred = []; // this step's run after its poll, waiting for "Run it"
  let reveal = null; // {answer}: the answer to mark; with `to` or `until`: once reached
  const showAnswer = () => {
    if (!reveal) return;
    if (reveal.answer != null) client.send({ type: 'poll_close', answer: reveal.answer });
    reveal = null;
    window.dispatchEvent(new Event('shaomai:lesson'));
  };
  const closePoll = () => { if (asked) { client.send({ type: 'poll_close' }); asked = false; } };
  const playOne = (d, now) => {
    if (d.kind === 'play' && d.to) {
      if (d.to > now) client.control('step', { count: d.to - now });
      if (reveal) reveal.to = d.to;
      if (d.to <= now) showAnswer(); // nothing to run: the picture already shows it
      return Math.max(now, d.to);
    }
    if (d.kind === 'play') {
      until = { ...d.until, max: d.max };
      if (reveal) reveal.until = true;
      client.control('play');
    } else if (d.kind === 'pause') client.control('pause');
    return now;
  };
  // After the run's directives: an answer waiting on no target is shown now.
  const revealIfIdle = () => { if (reveal && !reveal.to && !reveal.until) showAnswer(); };
  const apply = (forward) => {
    const step = doc?.steps[k];
    if (!step || !driver()) return;
    until = null;
    let now = store.get('step') || 0; // an `open` in this step starts the run again at 0
    // Next past a poll whose run never ran: voting closes and the answer shows now.
    if (forward && deferred.length) { armReveal(); closePoll(); showAnswer(); }
    deferred = [];
    // Predictions are in before the model moves (as the poll's own "Run it").
    if (forward && asked && step.do.some((d) => d.kind === 'play' || d.kind === 'open')) { armReveal(); closePoll(); }
    let polled = false;
    for (const d of step.do) {
      if (d.kind === 'select') for (const [key, v] of Object.entries(d.keys)) store.set(key, v);
      if (!forward) continue; // back: the view again, not the run
      if (polled && (d.kind === 'play' || d.kind === 'pause')) { deferred.push(d); continue; }
      if (d.kind === 'open') {
        if (d.lab !== labId || d.seed !== (store.get('seed') || 0)) {
          const u = new URL(location.href);
          u.search = '';
          for (const [key, v] of Object.entries({ lab: d.lab, seed: d.seed, lesson: id, lesson_step: k, lang: currentLang() })) u.searchParams.set(key, String(v));
          if (store.get('present')) u.searchParams.set('present', '1');
          location.assign(u);
          return;
        }
        const defaults = Object.fromEntries(Object.entries(info.schema?.properties || {}).filter(([, p]) => 'default' in p).map(([key, p]) => [key, p.default]));
        client.send({ type: 'set', params: { ...defaults, ...d.params } });
        client.control('reset');
        now = 0;
      } else if (d.kind === 'play' || d.kind === 'pause') now = playOne(d, now);
      else if (d.kind === 'poll') {
        // The answer stays on this page until the run shows it (showAnswer).
        const kind = d.choices ? { choices: d.choices } : { numeric: d.numeric };
        client.send({ type: 'poll', question: d.question, ...kind, lesson: { id, step: k } });
        reveal = null;
        pollAnswer = d.answer ?? null;
        asked = true;
        polled = true;
      }
    }
    if (forward) revealIfIdle();
  };
  let pollAnswer = null; // the answer of the poll this page asked (a lesson's `answer`)
  // Voting closes (Next, Run it): the answer waits for the run this step (or the next) plays.
  const armReveal = () => { if (pollAnswer != null) { reveal = { answer: pollAnswer }; pollAnswer = null; } };

  /** The poll's "Run it" on a lesson's poll: its step's deferred run, else the next step's
   *  (Next), and the answer once the run reaches its target. False: not this lesson's. */
  runIt = (pl) => {
    if (!driver() || !doc || doc.error || !pl || pl.id !== id || pl.step !== k) return false;
    armReveal();
    const nextPlays = doc.steps[k + 1]?.do.some((d) => d.kind === 'play');
    if (!deferred.length && !nextPlays) {
      // The lesson runs nothing for this poll: the answer now, and the page's own Run it.
      showAnswer();
      return false;
    }
    closePoll();
    if (deferred.length) {
      let now = store.get('step') || 0;
      for (const d of deferred) now = playOne(d, now);
      deferred = [];
      revealIfIdle();
    } else go(k + 1);
    window.dispatchEvent(new Event('shaomai:lesson'));
    return true;
  };
  revealPending = (pl) => !!reveal && !!pl && pl.id === id;

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
      if (met || r.step >= until.max) {
        until = null;
        client.control('pause');
        if (reveal?.until) showAnswer();
        return;
      }
    }
  };
  store.on('step', (v) => { if (reveal?.to && v >= reveal.to && driver()) showAnswer(); });
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
  store.on('shareCode', () => render()); // shared: the class's notes appear
  store.on('role', () => render());
  store.on('lesson', (v) => { if (following() && v && v !== id) load(v); });
  store.on('lesson_step', (v) => { if (following() && Number.isInteger(v) && v !== k) { k = v; render(); } });
  lang.on('lang', () => { if (id) load(id); });
  if (id && !doc) load(id); // a student's reload: the URL names it
  render();
}
