// The catalog: the lessons (catalogLessons.js), then every lab, by chapter, from /api/labs.
import { addStrings, applyDom, currentLang, has, initI18n, lang, pick, setLang, t } from './core/i18n.js';
import { savedRuns } from './savedRuns.js';
import { comingIn } from './curriculum.js';
import { lessonList, presentTail } from './catalogLessons.js';

addStrings({
  en: { 'catalog.to_come': 'Chapters still to come', 'catalog.to_come_hint': 'The curriculum has these chapters; their labs are not built yet.', 'catalog.thumb_alt': 'A frame of the “{title}” lab running', 'catalog.coming': 'Coming in this chapter: {labs}' },
  zh: { 'catalog.to_come': '尚未上线的章节', 'catalog.to_come_hint': '课程里有这些章节，它们的实验还没有做好。', 'catalog.thumb_alt': '“{title}”实验运行中的画面', 'catalog.coming': '本章即将上线：{labs}' },
});

/** A lab's picture (frontend/thumbs, made by `python -m tools.thumbnails`), lazy; a lab
 * without one gets a plain tile with its chapter number instead of a broken image. */
function thumb(lab) {
  const img = document.createElement('img');
  img.className = 'thumb';
  img.loading = 'lazy';
  img.decoding = 'async';
  img.width = 320;
  img.height = 200;
  img.alt = t('catalog.thumb_alt', { title: pick(lab.title) });
  img.src = `/thumbs/${encodeURIComponent(lab.id)}.webp`;
  img.onerror = () => {
    const tile = document.createElement('span');
    tile.className = 'thumb none';
    tile.setAttribute('aria-hidden', 'true');
    tile.textContent = String(lab.chapter);
    img.replaceWith(tile);
  };
  return img;
}

/** The curriculum's chapters (those with a title string: chapter_1, chapter_2, ...). */
function curriculum() {
  const out = [];
  for (let n = 1; has(`chapter_${n}`); n++) out.push(n);
  return out;
}

async function main() {
  const q = new URLSearchParams(location.search);
  await initI18n(q.get('lang'));
  const labs = await (await fetch('/api/labs')).json();
  const root = document.getElementById('chapters');
  const served = new Set(labs.map((lab) => lab.id));
  const render = () => {
    document.title = t('app_name');
    document.getElementById('lang-btn').textContent = currentLang() === 'zh' ? 'English' : '中文';
    // The class code field: a plain form to /join, which answers in this language.
    document.getElementById('join-lang').value = currentLang();
    const chapters = new Map();
    for (const lab of labs) {
      if (!chapters.has(lab.chapter)) chapters.set(lab.chapter, []);
      chapters.get(lab.chapter).push(lab);
    }
    root.replaceChildren(...[...chapters.entries()].sort((a, b) => a[0] - b[0]).map(([ch, items]) => {
      const sec = document.createElement('section');
      sec.className = 'chapter';
      const h = document.createElement('h2');
      h.textContent = `${t('chapter_n', { n: ch })} · ${t(`chapter_${ch}`)}`;
      const list = document.createElement('ul');
      list.className = 'cards';
      for (const lab of items) {
        const li = document.createElement('li');
        const a = document.createElement('a');
        a.className = 'card';
        a.href = `/lab.html?lab=${encodeURIComponent(lab.id)}&lang=${currentLang()}${presentTail()}`;
        a.dataset.lab = lab.id;
        const title = document.createElement('strong');
        title.textContent = pick(lab.title);
        const desc = document.createElement('span');
        desc.textContent = pick(lab.description);
        a.append(thumb(lab), title, desc);
        li.append(a);
        list.append(li);
      }
      sec.append(h, list);
      // The curriculum's labs of this chapter the server does not serve yet (curriculum.js).
      const coming = comingIn(ch, served);
      if (coming.length) {
        const p = document.createElement('p');
        p.className = 'coming';
        p.dataset.labs = coming.map((c) => c.id).join(',');
        p.textContent = t('catalog.coming', { labs: coming.map((c) => pick(c)).join(currentLang() === 'zh' ? '、' : ', ') });
        sec.append(p);
      }
      return sec;
    }));
    // The chapters no lab the server sends belongs to: named, so a reader knows they come.
    const missing = curriculum().filter((n) => !chapters.has(n));
    const later = document.getElementById('to-come');
    later.hidden = !missing.length;
    later.replaceChildren();
    if (missing.length) {
      const h = document.createElement('h2');
      h.textContent = t('catalog.to_come');
      const p = document.createElement('p');
      p.textContent = t('catalog.to_come_hint');
      const list = document.createElement('ul');
      for (const n of missing) {
        const li = document.createElement('li');
        li.dataset.chapter = String(n);
        li.textContent = `${t('chapter_n', { n })} · ${t(`chapter_${n}`)}`;
        list.append(li);
      }
      later.append(h, p, list);
    }
    applyDom(document);
  };
  document.getElementById('lang-btn').onclick = () => {
    setLang(currentLang() === 'zh' ? 'en' : 'zh');
    history.replaceState(null, '', `?lang=${currentLang()}`);
  };
  const [runs, lessons] = await Promise.all([savedRuns(document.getElementById('runs'), labs), lessonList(document.getElementById('lessons'), labs)]);
  lang.on('lang', () => { render(); runs.render(); lessons.render(); });
  render();
}

main();
