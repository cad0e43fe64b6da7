// The catalog's saved runs: replay or resume one, import an exported run.
import { pick, t } from './core/i18n.js';

export async function savedRuns(root, labs) {
  const titles = Object.fromEntries(labs.map((l) => [l.id, l.title]));
  const render = async () => {
    const runs = await (await fetch('/api/runs')).json();
    root.replaceChildren();
    const h = document.createElement('h2');
    h.textContent = t('saved_runs');
    root.append(h);
    if (!runs.length) {
      const p = document.createElement('p');
      p.className = 'muted';
      p.textContent = t('no_saved_runs');
      root.append(p);
    }
    const list = document.createElement('ul');
    list.className = 'runs';
    for (const run of runs) {
      const li = document.createElement('li');
      const name = document.createElement('strong');
      name.textContent = run.name;
      const info = document.createElement('span');
      info.textContent = `${pick(titles[run.lab]) || run.lab} · ${t('step')} ${run.step} · ${new Date(run.created * 1000).toLocaleString()}`;
      const links = ['replay', 'resume'].map((mode) => {
        const a = document.createElement('a');
        a.href = `/lab.html?lab=${encodeURIComponent(run.lab)}&run=${encodeURIComponent(run.id)}&mode=${mode}`;
        a.textContent = t(mode);
        return a;
      });
      const exp = document.createElement('a');
      exp.href = `/api/runs/${encodeURIComponent(run.id)}/export.json`;
      exp.textContent = 'JSON';
      li.append(name, info, ...links, exp);
      list.append(li);
    }
    root.append(list);
    const label = document.createElement('label');
    label.className = 'import';
    label.textContent = `${t('import_run')} `;
    const input = document.createElement('input');
    input.type = 'file';
    input.accept = 'application/json,.json';
    input.onchange = async () => {
      const file = input.files[0];
      if (!file) return;
      const res = await fetch('/api/runs/import', { method: 'POST', headers: { 'content-type': 'application/json' }, body: await file.text() });
      const body = await res.json().catch(() => ({}));
      status.textContent = res.ok ? t('imported') : `${res.status}: ${body.detail ? JSON.stringify(body.detail) : ''}`;
      if (res.ok) render();
    };
    const status = document.createElement('output');
    label.append(input);
    root.append(label, status);
  };
  await render();
  return { render };
}
