// The catalog's saved runs: replay or resume one, download it, rename or delete the ones
// this browser saved, import an exported run. Runs this browser's sessions saved (by hand
// or autosaved, found with /api/runs/latest) are listed too, with the token that may change
// them. Names made by the server ("<lab> · step N") are shown in the page's language.
import { pick, t } from './core/i18n.js';

const TOKENS = 'shaomai:run-tokens';

function tokens() {
  try { return JSON.parse(localStorage.getItem(TOKENS) || '{}') || {}; } catch { return {}; }
}

/** Remember the token that may rename or delete a run (a save, an import). */
export function rememberRun(runId, token) {
  if (!runId || !token) return;
  const all = tokens();
  all[runId] = token;
  const ids = Object.keys(all);
  for (const id of ids.slice(0, Math.max(0, ids.length - 500))) delete all[id]; // the newest 500
  try { localStorage.setItem(TOKENS, JSON.stringify(all)); } catch { /* private mode: this tab only */ }
}

function forgetRun(runId) {
  const all = tokens();
  delete all[runId];
  try { localStorage.setItem(TOKENS, JSON.stringify(all)); } catch { /* ignore */ }
}

/** This browser's sessions ({session, token}) the lab pages remember, newest last. */
function mySessions() {
  const out = [];
  for (const store of [sessionStorage, localStorage]) {
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i);
      if (!key || !key.startsWith('shaomai:') || key === TOKENS) continue;
      try {
        const v = JSON.parse(store.getItem(key));
        if (v && typeof v.session === 'string' && typeof v.token === 'string') out.push(v);
      } catch { /* not ours */ }
    }
  }
  return out.slice(-20);
}

/** A run's name in the page's language: server-made names are rebuilt from lab and step. */
export function runName(run, titles) {
  const lab = pick(titles[run.lab]) || run.lab;
  const made = `${run.lab} · step ${run.step}`;
  const name = !run.name || run.name === made ? t('runs.unnamed', { lab, step: run.step }) : run.name;
  return run.autosave ? `${t('runs.autosave')} · ${name}` : name;
}

export async function savedRuns(root, labs) {
  const titles = Object.fromEntries(labs.map((l) => [l.id, l.title]));
  const status = document.createElement('output');
  status.setAttribute('role', 'status');
  const say = (text) => { status.textContent = text; };

  async function change(run, method, body) {
    const token = tokens()[run.id];
    const res = await fetch(`/api/runs/${encodeURIComponent(run.id)}`, {
      method,
      headers: { 'x-shaomai-token': token || '', ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (res.status === 403) say(t('runs.not_yours'));
    else if (!res.ok) say(t('runs.failed', { status: res.status }));
    return res.ok;
  }

  const render = async () => {
    const runs = await (await fetch('/api/runs')).json();
    // What this browser's sessions saved (autosaves are not in the public list).
    const mine = mySessions();
    for (const s of mine) {
      const res = await fetch(`/api/runs/latest?session=${encodeURIComponent(s.session)}`);
      if (!res.ok || res.status === 204) continue; // 204: nothing saved from it
      const run = await res.json();
      rememberRun(run.id, s.token);
      if (!runs.some((r) => r.id === run.id)) runs.push(run);
    }
    runs.sort((a, b) => b.created - a.created);
    const known = tokens();
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
      li.dataset.run = run.id;
      const name = document.createElement('strong');
      name.className = 'run-name';
      name.textContent = runName(run, titles);
      const info = document.createElement('span');
      info.textContent = `${pick(titles[run.lab]) || run.lab} · ${t('runs.at_step', { step: run.step })} · ${new Date(run.created * 1000).toLocaleString()}`;
      const links = ['replay', 'resume'].map((mode) => {
        const a = document.createElement('a');
        a.href = `/lab.html?lab=${encodeURIComponent(run.lab)}&run=${encodeURIComponent(run.id)}&mode=${mode}`;
        a.textContent = t(mode);
        return a;
      });
      const exp = document.createElement('a');
      exp.href = `/api/runs/${encodeURIComponent(run.id)}/export.json`;
      exp.textContent = t('runs.export_json');
      li.append(name, info, ...links, exp);
      if (known[run.id]) {
        const rename = document.createElement('button');
        rename.type = 'button';
        rename.className = 'run-rename';
        rename.textContent = t('runs.rename');
        rename.onclick = async () => {
          const next = prompt(t('runs.rename_prompt'), runName({ ...run, autosave: false }, titles));
          if (next === null || !next.trim()) return;
          if (await change(run, 'PATCH', { name: next.trim().slice(0, 200) })) { say(t('runs.renamed')); render(); }
        };
        const del = document.createElement('button');
        del.type = 'button';
        del.className = 'run-delete';
        del.textContent = t('runs.delete');
        del.onclick = async () => {
          if (!confirm(t('runs.delete_confirm', { name: runName(run, titles) }))) return;
          if (await change(run, 'DELETE')) { forgetRun(run.id); say(t('runs.deleted')); render(); }
        };
        li.append(rename, del);
      }
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
      if (res.ok) rememberRun(body.id, body.token);
      say(res.ok ? t('imported') : `${res.status}: ${typeof body.detail === 'string' ? body.detail : ''}`);
      if (res.ok) render();
    };
    label.append(input);
    root.append(label, status);
  };
  await render();
  return { render };
}
