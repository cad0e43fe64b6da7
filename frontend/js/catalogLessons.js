// The catalog's lessons (docs/lessons.md): each from GET /api/lessons, titled in the page's
// language, with the labs it uses and whose it is; a broken one shows its error, not a link.
import { addStrings, currentLang, pick, t } from './core/i18n.js';
// Its stylesheet is linked by index.html (core/css.js would pull plotly into the catalog).

addStrings({
  en: {
    'lessons.title': 'Lessons',
    'lessons.hint': 'A lab, step by step: predict what happens, run it, see why.',
    'lessons.steps': '{n} steps', 'lessons.steps.one': '1 step',
    'lessons.builtin': 'Built in', 'lessons.teacher': 'Your lesson',
    'lessons.labs': 'Lab: {labs}',
    'lessons.broken': 'This lesson cannot be opened: {why}',
  },
  zh: {
    'lessons.title': '课程',
    'lessons.hint': '一步一步走进实验：先预测会发生什么，再运行，看懂为什么。',
    'lessons.steps': '共 {n} 步',
    'lessons.builtin': '内置', 'lessons.teacher': '你的课程',
    'lessons.labs': '实验：{labs}',
    'lessons.broken': '这节课打不开：{why}',
  },
});

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

/** `&present=1` when the catalog was reached from presenter mode (the lab's home link says
 *  so): a teacher opening a lesson from the projector stays in presenter mode. */
export const presentTail = () => (new URLSearchParams(location.search).get('present') === '1' ? '&present=1' : '');

/** Fill `root` (a section) with the lessons; `labs` (from /api/labs) names their labs. */
export async function lessonList(root, labs) {
  let lessons = [];
  try {
    const res = await fetch('/api/lessons');
    if (res.ok) lessons = await res.json();
    else console.warn('GET /api/lessons:', res.status);
  } catch (e) {
    console.warn('GET /api/lessons failed', e); // the labs still show; the section stays hidden
  }
  // A teacher's own lessons first: the ones they dropped in are what they came for.
  lessons.sort((a, b) => (a.source === 'teacher' ? 0 : 1) - (b.source === 'teacher' ? 0 : 1));
  const titles = new Map(labs.map((lab) => [lab.id, lab.title]));
  const render = () => {
    root.hidden = !lessons.length;
    root.replaceChildren();
    if (!lessons.length) return;
    const list = el('ul', 'lesson-cards');
    for (const ls of lessons) {
      const li = el('li');
      const card = el(ls.error ? 'div' : 'a', 'lesson-card');
      card.dataset.lesson = ls.id;
      card.dataset.source = ls.source;
      if (ls.error) card.dataset.broken = '1';
      else card.href = `/lab.html?lesson=${encodeURIComponent(ls.id)}&lang=${currentLang()}${presentTail()}`;
      const top = el('span', 'lesson-top');
      top.append(el('strong', 'lesson-title', pick(ls.title) || ls.id), el('span', `lesson-source ${ls.source}`, t(`lessons.${ls.source}`)));
      card.append(top);
      if (ls.error) card.append(el('span', 'lesson-error', t('lessons.broken', { why: ls.error })));
      else {
        const names = ls.labs.map((id) => pick(titles.get(id)) || id).join(currentLang() === 'zh' ? '、' : ', ');
        card.append(el('span', 'lesson-meta', `${t('lessons.labs', { labs: names })} · ${t('lessons.steps', { n: ls.steps })}`));
      }
      li.append(card);
      list.append(li);
    }
    root.append(el('h2', '', t('lessons.title')), el('p', 'lessons-hint', t('lessons.hint')), list);
  };
  render();
  return { render };
}
