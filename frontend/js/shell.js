// The lab page: one shell every lab reuses. It connects the client, the controls, the
// scrubber, the param form and the lab's view module (js/labs/<lab>.js).
import { LabClient } from './core/client.js';
import { ensureCss } from './core/css.js';
import { addStrings, applyDom, currentLang, has, initI18n, lang, pick, setLang, t } from './core/i18n.js';
import { loadPlotly, Plotly } from './core/plotly.js';
import { createStore } from './core/store.js';
import { labViewKeys, readUrl, schemaDefaults, setViewKeys, storeKey, viewKeysOf, writeUrl } from './core/url.js';
import { canvasExport } from './components/canvasExport.js';
import { controls } from './components/controls.js';
import { paramForm } from './components/paramForm.js';
import { scrubber } from './components/scrubber.js';
import { classroom } from './classroom.js';
import { presenter } from './presenter.js';

const $ = (s) => document.querySelector(s);

addStrings({
  en: { url_left_out: 'This page’s link leaves out {fields}: too long for a URL. Save the run (or export it) to share it exactly; a reload of this tab keeps it.' },
  zh: { url_left_out: '这个页面的链接里没有 {fields}：太长，放不进网址。要原样分享，请保存（或导出）这次运行；在本标签页里刷新会保留它。' },
});

function toast(text) {
  const el = $('#toast');
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, 6000);
}

// A polite text alternative of what the charts show, for screen readers: the latest
// values at most every 3 s (a screen reader cannot keep up with 30 frames a second).
const said = { at: 0, frame: null, timer: null };
function announce(frame) {
  said.frame = frame;
  if (said.timer) return;
  const speak = () => {
    said.timer = null;
    said.at = performance.now();
    const f = said.frame;
    const parts = Object.entries(f.scalars).slice(0, 3).map(([k, v]) => `${k} ${Number.isFinite(v) ? Number(v.toPrecision(3)) : v}`);
    $('#announce').textContent = t('announce', { values: parts.join(', '), step: f.step });
  };
  said.timer = setTimeout(speak, Math.max(0, 3000 - (performance.now() - said.at)));
}

function banner(text, kind = 'info') {
  const el = $('#banner');
  el.hidden = !text;
  el.textContent = text || '';
  el.dataset.kind = kind;
}

async function main() {
  const first = readUrl(null);
  const labId = first.lab || 'linear-regression';
  // The strings, the lab's info and then its view's modules load side by side.
  const strings = initI18n(first.lang);
  const res = await fetch(`/api/labs/${encodeURIComponent(labId)}`);
  const viewModule = res.ok ? import(`./labs/${labId}.js`) : null; // a lab the server knows
  viewModule?.catch(() => {}); // awaited below
  await strings;
  if (!res.ok) {
    banner(t('no_such_lab', { lab: labId }), 'error');
    return;
  }
  const info = await res.json();
  // The lab's view-state keys (layer, head, channel, expert, token...) from its catalog entry.
  const viewKeys = viewKeysOf(info);
  setViewKeys(viewKeys);
  const defaults = schemaDefaults(info.schema);
  const url = readUrl(info.schema);
  // Params too long for a link (pasted text) live in this tab, so a reload keeps them.
  const longKey = `shaomai:long:${labId}`;
  const long = JSON.parse(sessionStorage.getItem(longKey) || '{}');
  for (const k of Object.keys(long)) if (!(k in ((info.schema && info.schema.properties) || {}))) delete long[k];
  const store = createStore({ run: null, params: { ...defaults, ...long, ...url.params }, seed: url.seed, role: null, state: 'paused', step: 0 });
  const client = new LabClient();
  const openMsg = () => ({ type: 'open', lab: labId, params: store.get('params'), seed: store.get('seed') });
  const urlKey = () => JSON.stringify([store.get('params'), store.get('seed')]);
  // The driver's session, for a reload of the same URL: rejoined, not opened again.
  const remember = () => sessionStorage.setItem(`shaomai:${labId}`, JSON.stringify({ session: client.session, token: client.token, key: urlKey() }));

  // Connect now: the server opens the session while the view is built. Its messages wait
  // in the client until every handler below is in place (client.release()).
  client.hold();
  const saved = JSON.parse(sessionStorage.getItem(`shaomai:${labId}`) || 'null');
  const q = new URLSearchParams(location.search);
  if (q.get('join')) client.start({ type: 'join', code: q.get('join') });
  else if (q.get('run')) client.start({ type: 'open', run: q.get('run'), mode: q.get('mode') === 'resume' ? 'resume' : 'replay' });
  else if (saved && saved.key === urlKey()) client.join(saved.session, saved.token);
  else client.open(labId, store.get('params'), store.get('seed'));

  const titles = () => {
    document.title = `${pick(info.title)} · ${t('app_name')}`;
    $('#lab-title').textContent = pick(info.title);
    $('#lab-desc').textContent = pick(info.description);
    $('#lang-btn').textContent = currentLang() === 'zh' ? 'English' : '中文';
  };

  const ctx = {
    lab: labId, info, store, client, t, pick,
    params: () => store.get('params'),
    setParams: (p) => client.send({ type: 'set', params: p }),
    infer: (input) => client.send({ type: 'infer', input }),
    toast,
  };
  const mod = await viewModule;
  if (mod.stylesheet) ensureCss(mod.stylesheet); // the view's own sheet
  // plotly.js (1.5 MB) takes longer to compile than everything else: a view that draws
  // without it (`lazyPlotly`: its charts wait for it) shows its first frame before plotly
  // loads; the others need it to be built.
  if (!mod.lazyPlotly) await loadPlotly();
  let plotlyAsked = !mod.lazyPlotly;
  const askPlotly = () => {
    if (plotlyAsked) return;
    plotlyAsked = true;
    loadPlotly().then(() => resizePlots(), (err) => banner(String(err), 'error'));
  };
  const view = mod.default($('#view'), ctx);
  canvasExport($('#view'));

  const bar = controls($('#controls'), { onAction: (action, extra) => client.control(action, extra) });
  const scrub = scrubber($('#scrubber'), {
    onSeek: (step) => { client.send({ type: 'seek', step }); saveUrl({ step }); cls.scrubbed(step); },
    onLive: () => { client.send({ type: 'seek', step: store.get('step') }); saveUrl({ step: null }); cls.scrubbed(-1); },
  });
  const cls = classroom($('#class-tools'), { client, store, scrub, toast, labId, viewKeys });
  $('#params').addEventListener('submit', (e) => e.preventDefault());
  const form = paramForm($('#params'), { schema: info.schema, onChange: (p) => ctx.setParams(p) });
  form.build(store.get('params'));
  form.setReadOnly(true); // until `ready`: a click before the session exists would be lost
  bar.setReadOnly(true);

  // A param the link cannot carry is never dropped silently: the page names it.
  const urlNote = (left) => {
    const names = Object.keys(left);
    if (names.length) sessionStorage.setItem(longKey, JSON.stringify(left));
    else sessionStorage.removeItem(longKey);
    const el = $('#url-note');
    el.hidden = !names.length;
    el.dataset.fields = names.join(',');
    if (names.length) el.textContent = `⚠ ${t('url_left_out', { fields: names.map((k) => `“${pick(info.schema.properties[k]?.label) || k}”`).join(', ') })}`;
  };
  const saveUrl = (extra = {}) => urlNote(writeUrl({ lab: labId, seed: store.get('seed'), params: store.get('params'), defaults, extra: { lang: currentLang(), ...extra } }));
  // The lab's own view keys (a selected layer, head, arm...) follow the store into the URL;
  // the generic ones (hover, presenter, blank, scrub) are the page's own.
  const urlViewKeys = new Map(Object.keys(labViewKeys(viewKeys)).map((k) => [storeKey(k), k]));
  store.on('*', (key, value) => {
    if (urlViewKeys.has(key)) saveUrl({ [urlViewKeys.get(key)]: value === null || value === undefined ? null : value });
  });
  let lastScalar = -1;
  let pendingSeek = url.step;

  const newRun = (run) => {
    if (store.get('run') === run) return;
    store.set('run', run);
    lastScalar = -1;
    scrub.reset();
    view.reset?.();
  };

  client.on('ready', (m) => {
    store.set('role', m.role);
    store.set('params', m.params);
    store.set('seed', m.seed);
    newRun(m.run);
    form.build(m.params);
    store.set('readOnly', !!m.read_only);
    const ro = m.role !== 'driver' || m.read_only;
    form.setReadOnly(ro);
    bar.setReadOnly(ro);
    $('#role').textContent = m.read_only ? t('replay_badge') : ro ? t('viewer_badge') : '';
    bar.setState(m.state, m.step);
    store.set('step', m.step);
    scrub.setLatest(m.step);
    if (m.token) remember();
    saveUrl({ step: pendingSeek });
    setTimeout(askPlotly, 1500); // a session that sends no frame still gets its charts
    if (pendingSeek !== null && pendingSeek < m.step) scrub.seekTo(pendingSeek);
    pendingSeek = null;
    banner('');
  });
  client.on('status', (m) => {
    newRun(m.run);
    store.set('state', m.state);
    store.set('step', m.step);
    store.set('connections', m.connections);
    bar.setState(m.state, m.step);
    scrub.setLatest(m.step);
    if (m.state === 'diverged') banner(t('diverged_at', { step: m.step }), 'error');
    else if (m.state === 'error') banner(`${t('state_error')}: ${m.message || ''} — ${t('press_reset')}`, 'error');
    else if ($('#banner').dataset.kind === 'error') banner('');
  });
  const onRows = (m) => {
    newRun(m.run);
    const rows = m.rows.filter((r) => r.step > lastScalar); // never a duplicated point
    if (!rows.length) return;
    lastScalar = rows[rows.length - 1].step;
    store.set('step', Math.max(store.get('step'), lastScalar));
    bar.setStep(store.get('step'));
    view.scalars?.(rows);
  };
  client.on('scalars', onRows);
  client.on('history', onRows);
  // Frames arrive faster than plotly can draw: draw the newest once per animation frame,
  // and after a draw that took c ms wait c ms more, so the page stays responsive.
  const draw = { frame: null, infer: null, scheduled: false, cost: 0, end: 0 };
  const drawNow = () => {
    if (performance.now() - draw.end < draw.cost) { requestAnimationFrame(drawNow); return; }
    draw.scheduled = false;
    const t0 = performance.now();
    const { frame, infer } = draw;
    draw.frame = draw.infer = null;
    if (frame) {
      view.frame(frame);
      $('#frame-step').textContent = String(frame.step);
      store.set('shownStep', frame.step);
      announce(frame);
      if (!plotlyAsked) requestAnimationFrame(() => setTimeout(askPlotly)); // once it is painted
    }
    if (infer) (view.infer || view.frame)(infer);
    draw.end = performance.now();
    draw.cost = Math.min(250, draw.end - t0);
    view.drawn?.(frame || infer);
  };
  const scheduleDraw = (key, f) => {
    draw[key] = f;
    if (!draw.scheduled) { draw.scheduled = true; requestAnimationFrame(drawNow); }
  };
  client.on('frame', (f) => {
    if (f.run !== undefined) newRun(f.run);
    if (f.infer) return scheduleDraw('infer', f);
    if (!f.replay) {
      store.set('step', Math.max(store.get('step'), f.step));
      scrub.setLatest(store.get('step'));
      if (scrub.scrubbing) return;
    }
    scheduleDraw('frame', f);
  });
  client.on('params', (m) => {
    store.set('params', m.params);
    if (client.token) remember(); // a reload of this URL rejoins this session (and its kept runs)
    form.set(m.params);
    saveUrl();
    view.params?.(m.params);
    if (m.reset) toast(t('params_reset'));
  });
  client.on('error', (m) => {
    if (m.code === 'not_found' && m.field === 'session') {
      sessionStorage.removeItem(`shaomai:${labId}`);
      client.send(openMsg());
      return;
    }
    if (m.code === 'diverged') return banner(t('diverged_at', { step: store.get('step') }), 'error');
    // The server names its message (key + values) so it reads in the page's language; a
    // param named in it is shown by its label, as the form shows it.
    const values = { ...(m.values || {}) };
    const param = info.schema?.properties?.[values.field];
    if (param?.label) values.field = pick(param.label);
    toast(`${t(`err_${m.code}`)}: ${m.key && has(m.key) ? t(m.key, values) : m.message}`);
    if (m.code === 'invalid_params' || m.code === 'too_large') form.set(store.get('params'));
  });
  client.on('connection', ({ up }) => {
    document.body.classList.toggle('offline', !up);
    if (!up) banner(t('connection_lost'), 'warn');
    else if ($('#banner').dataset.kind === 'warn') banner('');
  });

  presenter({ store, client, scrub, bar, url, viewKeys });
  // Plotly charts size themselves on window resizes only: follow layout changes too.
  const resizePlots = () => requestAnimationFrame(() => requestAnimationFrame(() => {
    if (!Plotly) return; // a lazy view's charts: sized when plotly arrives
    const big = !!store.get('present'); // readable from the back of a room
    for (const el of document.querySelectorAll('.js-plotly-plot')) {
      if (!!el.dataset.present !== big) {
        el.dataset.present = big ? '1' : '';
        Plotly.relayout(el, { 'font.size': big ? 17 : 12 });
      }
      Plotly.Plots.resize(el);
    }
  }));
  store.on('present', resizePlots);
  resizePlots();
  $('#lang-btn').onclick = () => setLang(currentLang() === 'zh' ? 'en' : 'zh');
  lang.on('lang', () => {
    titles();
    form.build(store.get('params'));
    form.setReadOnly(store.get('role') !== 'driver');
    bar.relabel();
    cls.relabel();
    bar.setState(store.get('state'), store.get('step'));
    scrub.relabel();
    view.relabel?.();
    saveUrl();
  });
  titles();
  applyDom(document);
  window.shaomai = { client, store, view }; // for tests and the curious
  client.release();
}

main().catch((err) => {
  banner(String(err), 'error');
  throw err;
});
