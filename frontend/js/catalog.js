// The catalog: every lab, by chapter, from /api/labs.
import { applyDom, currentLang, initI18n, lang, pick, setLang, t } from './core/i18n.js';
import { savedRuns } from './savedRuns.js';

async function main() {
  const q = new URLSearchParams(location.search);
  await initI18n(q.get('lang'));
  const labs = await (await fetch('/api/labs')).json();
  const root = document.getElementById('chapters');
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
        a.href = `/lab.html?lab=${encodeURIComponent(lab.id)}&lang=${currentLang()}`;
        a.dataset.lab = lab.id;
        const title = document.createElement('strong');
        title.textContent = pick(lab.title);
        const desc = document.createElement('span');
        desc.textContent = pick(lab.description);
        a.append(title, desc);
        li.append(a);
        list.append(li);
      }
      sec.append(h, list);
      return sec;
    }));
    applyDom(document);
  };
  document.getElementById('lang-btn').onclick = () => {
    setLang(currentLang() === 'zh' ? 'en' : 'zh');
    history.replaceState(null, '', `?lang=${currentLang()}`);
  };
  const runs = await savedRuns(document.getElementById('runs'), labs);
  lang.on('lang', () => { render(); runs.render(); });
  render();
}

main();
