// The lab page: one shell every lab reuses. It connects the client, the controls, the
// scrubber, the param form and the lab's view module (js/labs/<lab>.js).
import { LabClient } from './core/client.js';
import { ensureCss } from './core/css.js';
import { addStrings, applyDom, currentLang, initI18n, lang, pick, setLang, t } from './core/i18n.js';
import { loadPlotly, Plotly } from './core/plotly.js';
import { createStore } from './core/store.js';
import { labViewKeys, readUrl, schemaDefaults, setViewKeys, storeKey, viewKeysOf, writeUrl } from './core/url.js';
import { canvasExport } from './components/canvasExport.js';
import { measured } from './components/plot.js';
import './components/pasteLimit.js'; // a paste cut at a box's limit is said, in every lab
import './components/wideTables.js'; // a table that scrolls sideways shows that it does
import { controls } from './components/controls.js';
import { paramForm } from './components/paramForm.js';
import { scrubber } from './components/scrubber.js';
import { classroom, keepRestoreToken } from './classroom.js';
import { ago, banner, errorSentence, labelOf, linkRefused, note, notice, serverWhy, toast } from './core/notices.js';
import { announcer, stepRate } from './components/liveReadouts.js';
import { viewing } from './components/viewing.js';
import { forgetRun, latestSaved, rememberRun } from './core/runs.js';
import { startSession } from './core/sessionStart.js';
import { presenter, presenterSheet } from './presenter.js';
import { polls } from './polls.js';
import { lesson } from './lesson.js';
import { tryNext } from './components/tryNext.js';
import { shortcutHelp } from './components/shortcutHelp.js';

const $ = (s) => document.querySelector(s);

addStrings({
  en: { url_left_out: 'This page’s link leaves out {fields}: too long for a URL. Save the run (or export it) to share it exactly; a reload of this tab keeps it.', no_play: 'Nothing to play here: every change is computed and drawn at once.' },
  zh: { url_left_out: '这个页面的链接里没有 {fields}：太长，放不进网址。要原样分享，请保存（或导出）本次训练；在本标签页里刷新会保留它。', no_play: '这里没有要播放的：每次改动都会立刻算好并画出来。' },
});

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
  client.phoneSlice = !!info.phone_slice; // docs/streams.md, "A phone joining a playing class"
  const openMsg = () => ({ type: 'open', lab: labId, params: store.get('params'), seed: store.get('seed') });
  // Connect now: the server opens the session while the view is built. Its messages wait
  // in the client until every handler below is in place (client.release()).
  client.hold();
  const { remember, earlier, joinCode } = startSession(client, labId, store);

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
    note,
  };
  const mod = await viewModule;
  // The view's own sheet and presenter mode's, applied before the view is built (its grids
  // measure their boxes); a sheet slow to come holds the lab back 3 s at most.
  const sheets = [presenterSheet, mod.stylesheet && ensureCss(mod.stylesheet)];
  await Promise.race([Promise.all(sheets), new Promise((r) => setTimeout(r, 3000))]);
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
  tryNext($('#view'), ctx); // "try this next": the lab's experiments, under the view

  const bar = controls($('#controls'), { onAction: (action, extra) => client.control(action, extra) });
  // One rule for play/step: the lab's catalog `plays` (true; false: a step only redraws what
  // every change already draws; or a condition on the params, e.g. {mode: 'fit'}).
  const showPlay = () => {
    const c = info.plays ?? true;
    bar.setPlays(c && typeof c === 'object' ? Object.entries(c).every(([k, v]) => store.get('params')[k] === v) : c !== false);
  };
  store.on('params', showPlay);
  showPlay();
  const speedSel = bar.el.querySelector('[data-act=speed]'); // the lab's default play speed
  if (info.play_speed && [...speedSel.options].some((o) => Number(o.value) === info.play_speed)) speedSel.value = String(info.play_speed);
  const scrub = scrubber($('#scrubber'), {
    onSeek: (step) => { client.send({ type: 'seek', step }); saveUrl({ step, scrub: 1 }); cls.scrubbed(step); },
    onLive: () => { viewing.set(null); client.send({ type: 'seek', step: store.get('step') }); saveUrl({ step: store.get('step') || null, scrub: null }); cls.scrubbed(-1); },
  });
  const cls = classroom($('#class-tools'), { client, store, scrub, toast, labId, viewKeys });
  $('#params').addEventListener('submit', (e) => e.preventDefault());
  let lastSet = {}; // the values last sent: a refusal names the one refused
  const form = paramForm($('#params'), { schema: info.schema, waits: mod.formWaits, onChange: (p) => { lastSet = p; ctx.setParams(p); } });
  // A phone: the picture first, the params folded, the class tools below the picture (the
  // sticky bar under it holds play/step and the timeline only).
  const phone = matchMedia('(max-width: 760px)');
  if (phone.matches) $('#params-box').open = false;
  const placeClassTools = () => (phone.matches ? $('#class-slot') : $('.toolbar')).append($('#class-tools'));
  phone.addEventListener('change', placeClassTools);
  placeClassTools();
  // A link's value the lab cannot take: its default is used, and the page says which and why.
  for (const ref of url.refused) note(linkRefused(info.schema, ref), `link-${ref.field}`);
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
  // The link's step: a replayed step (scrub=1) is shown again; a live one is trained to.
  let pendingSeek = url.step;
  const urlScrub = url.view.scrub === '1';
  let joinedOnce = false; // a `ready` came: a later session not_found is a lost run
  let lostAt = 0;
  stepRate($('#rate'), store); // the steps per second actually taken
  const announce = announcer($('#announce'));
  // While live the URL says the step reached (a second at most between writes).
  let urlStepTimer = null;
  const liveStepToUrl = () => {
    if (urlStepTimer || scrub.scrubbing) return;
    urlStepTimer = setTimeout(() => { urlStepTimer = null; if (!scrub.scrubbing && store.get('role')) saveUrl({ step: store.get('step') || null, scrub: null }); }, 1000);
  };

  const newRun = (run) => {
    if (store.get('run') === run) return;
    store.set('run', run);
    lastScalar = -1;
    scrub.reset();
    viewing.set(null);
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
    bar.setReadOnly(ro, ro); // a follower's dock holds no buttons that do nothing
    $('#role').textContent = m.read_only ? t('replay_badge') : ro ? t('viewer_badge') : '';
    bar.setState(m.state, m.step);
    store.set('step', m.step);
    scrub.setLatest(m.step);
    if (m.token) remember();
    if (m.token) rememberRun(labId, { session: m.session, token: m.token, step: m.step });
    const joined = new URLSearchParams(location.search).get('join');
    store.set('classCode', m.role === 'viewer' && joined ? joined : null);
    const seekTo = pendingSeek;
    const replayed = seekTo !== null && urlScrub && seekTo < m.step;
    saveUrl({ step: replayed ? seekTo : m.step || null, scrub: replayed ? 1 : null, ...(m.role === 'driver' ? { join: null } : {}) });
    setTimeout(askPlotly, 1500); // a session that sends no frame still gets its charts
    if (replayed) scrub.seekTo(seekTo);
    // A shared link's live step on a new session: train to it (same seed, same run).
    else if (seekTo > m.step && m.role === 'driver' && !m.read_only) client.control('step', { count: seekTo - m.step });
    pendingSeek = null;
    joinedOnce = true;
    banner('');
    if (earlier && earlier.session !== m.session && m.role === 'driver') {
      notice($('#notice'), t('note.continue_text', { step: earlier.step, ago: ago(earlier.at) }), [
        { label: t('note.continue', { step: earlier.step }), act: 'continue_run', onClick: () => continueRun(earlier) },
        { label: t('note.dismiss'), act: 'dismiss_run', onClick: () => forgetRun(labId, earlier.session) },
      ]);
    }
  });
  // Continue the earlier run: this tab rejoins its session (its params come with it).
  const continueRun = (run) => {
    sessionStorage.setItem(`shaomai:${labId}`, JSON.stringify({ session: run.session, token: run.token, key: 'continue' }));
    sessionStorage.setItem(`shaomai:continue:${labId}`, '1');
    location.reload();
  };
  client.on('status', (m) => {
    newRun(m.run);
    store.set('state', m.state);
    store.set('step', m.step);
    store.set('connections', m.connections);
    bar.setState(m.state, m.step);
    scrub.setLatest(m.step);
    if (client.token) rememberRun(labId, { session: client.session, token: client.token, step: m.step });
    liveStepToUrl();
    if (m.state === 'shutting_down') return notice($('#notice'), t('note.server_restarting'), [], 'warn');
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
    liveStepToUrl(); // the link follows the run while it plays, not only at its pauses
    view.scalars?.(rows);
  };
  client.on('scalars', onRows);
  client.on('history', onRows);
  // Frames arrive faster than plotly can draw: draw the newest once per animation frame,
  // and after a draw that took c ms wait c ms more, so the page stays responsive.
  const draw = { frame: null, infer: null, scheduled: false, cost: 0, end: 0 };
  const drawNow = () => {
    const wait = draw.end + draw.cost - performance.now();
    // A timer, not an animation-frame poll: each polled frame is one the page renders.
    if (wait > 0) { setTimeout(() => requestAnimationFrame(drawNow), wait); return; }
    draw.scheduled = false;
    const t0 = performance.now();
    const { frame, infer } = draw;
    draw.frame = draw.infer = null;
    if (frame) {
      measured(() => view.frame(frame));
      $('#frame-step').textContent = String(frame.step);
      if (frame.replay) scrub.shown(frame.step); // the step recorded nearest the one asked for
      store.set('shownStep', frame.step);
      viewing.set(frame.replay && scrub.scrubbing ? frame.step : null); // charts' cursor, "now" titles
      announce(frame);
      if (!plotlyAsked) requestAnimationFrame(() => setTimeout(askPlotly)); // once it is painted
    }
    if (infer) measured(() => (view.infer || view.frame)(infer));
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
    // A student in a class the server lost: wait for the teacher's restore, in the class.
    if (m.key === 'err.class_away') return cls.waitForClass(joinCode);
    if (m.code === 'not_found' && m.field === 'session') {
      const lost = joinedOnce ? store.get('step') : 0;
      const lostSession = client.id;
      sessionStorage.removeItem(`shaomai:${labId}`);
      forgetRun(labId, lostSession);
      if (joinedOnce) {
        // The server restarted (or the session expired) under a live page: say so, clear
        // the old run's charts, and offer its last saved state.
        lostAt = lost;
        store.set('run', undefined);
        newRun(null);
        store.set('step', 0);
        bar.setState('paused', 0);
        $('#frame-step').textContent = '–';
        // A student in a class the server lost waits for the teacher's restore, in the class.
        if (store.get('classCode')) return cls.waitForClass(store.get('classCode'));
        notice($('#notice'), t('note.run_lost', { step: lost }), [], 'warn');
        offerRestore(lostSession);
      }
      client.send(openMsg());
      return;
    }
    if (m.code === 'diverged') return banner(t('diverged_at', { step: store.get('step') }), 'error');
    // Refused before the lab opened (a link's value the schema allows, the lab does not):
    // open with that field's default, and say which value and why.
    if (!joinedOnce && (m.code === 'invalid_params' || m.code === 'too_large')) {
      const params = { ...store.get('params') };
      const field = m.field && m.field in params ? m.field : m.values?.field;
      if (field && field in params && JSON.stringify(params[field]) !== JSON.stringify(defaults[field])) {
        note(t('note.link_refused', { field: labelOf(info.schema, field), value: `“${params[field]}”`, why: serverWhy(m, info.schema), fallback: String(defaults[field]) }), `link-${field}`);
        params[field] = defaults[field];
      } else {
        note(t('note.open_all_refused', { why: serverWhy(m, info.schema) }), 'link-all');
        Object.assign(params, defaults);
      }
      store.set('params', params);
      form.set(params);
      client.send(openMsg());
      return;
    }
    // Every refusal is a sentence in the page's language naming the control.
    toast(errorSentence(m, info.schema, lastSet));
    if (m.code === 'invalid_params' || m.code === 'too_large') form.set(store.get('params'));
  });
  // The lost session's last saved or autosaved state, if the server kept one.
  const offerRestore = async (session) => {
    if (!session) return;
    const last = await latestSaved(session);
    if (!last || !last.id || last.lab !== labId) return;
    const at = last.created ? last.created * 1000 : Date.now();
    const label = last.autosave ? t('note.restore_auto', { step: last.step, ago: ago(at) }) : t('note.restore', { step: last.step });
    notice($('#notice'), t('note.run_lost', { step: lostAt }), [{ label, act: 'restore_run', onClick: () => {
      const u = new URL(location.href);
      u.searchParams.set('run', last.id);
      u.searchParams.set('mode', 'resume');
      keepRestoreToken(last.id, client.lostToken);
      location.assign(u);
    } }], 'warn');
  };
  client.on('connection', ({ up }) => {
    document.body.classList.toggle('offline', !up);
    if (!up) banner(t('connection_lost'), 'warn');
    else if ($('#banner').dataset.kind === 'warn') banner('');
  });

  presenter({ store, client, scrub, bar, url, viewKeys });
  shortcutHelp(); // `?`: the keyboard help
  polls({ store, client }); // predict, then run: the class's votes
  lesson({ store, client, info, labId });
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
