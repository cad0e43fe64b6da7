// The training dashboard every training view extends: curves by arm (scalars `<key>` for a
// one-arm lab, `arm.<i>.<key>` for several; arms named by frame meta `arms`), the kept runs
// drawn faded and dashed beside them ("Keep this run": the session keeps them, so they
// survive a reload), a gradient waterfall (stage × step, log colour), a readout, and an
// element where the lab's own pictures go. The view calls onScalars / onFrame / reset /
// relabel from its own hooks; the dashboard listens to `ready` and `kept` itself.
import { ensureCss } from '../core/css.js';
import { num } from '../core/frame.js';
import { addStrings, currentLang, pick, t } from '../core/i18n.js';
import { lineChart } from './lineChart.js';
import { paramDiff } from './paramDiff.js';
import { panel } from './panel.js';
import { COLORS, finite } from './plot.js';
import { readout as makeReadout } from './readout.js';
import { waterfall as makeWaterfall } from './waterfall.js';

addStrings({
  en: {
    'dash.loss': 'Loss', 'dash.train_loss': 'training loss', 'dash.grad': 'Gradient norm per stage (log colour)',
    'dash.readout': 'Now', 'dash.step': 'Step', 'dash.keep': 'Keep this run', 'dash.keep_title': 'Keep this run’s curves beside the next runs (at most 2)',
    'dash.kept': 'Kept:', 'dash.kept_run': 'kept run', 'dash.kept_with': '{label} ({diff})', 'dash.unkeep': 'Drop the kept run {label}',
    'dash.diverged': 'diverged', 'dash.diverged_tag': ' (diverged)', 'dash.arm': 'arm {i}',
  },
  zh: {
    'dash.loss': '损失', 'dash.train_loss': '训练损失', 'dash.grad': '各阶段的梯度范数（对数色标）',
    'dash.readout': '当前', 'dash.step': '步数', 'dash.keep': '保留本次训练', 'dash.keep_title': '把本次训练的曲线留在后面几次训练旁边（最多 2 个）',
    'dash.kept': '已保留：', 'dash.kept_run': '保留的训练', 'dash.kept_with': '{label}（{diff}）', 'dash.unkeep': '去掉保留的训练 {label}',
    'dash.diverged': '已发散', 'dash.diverged_tag': '（已发散）', 'dash.arm': '第 {i} 个变体',
  },
});

const MAX_KEPT = 2;
const KEPT_GREY = '#8a8f98';

const div = (cls) => { const e = document.createElement('div'); if (cls) e.className = cls; return e; };
const armOf = /^arm\.(\d+)\./;

function fade(hex, alpha = 0.5) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/**
 * root: where the dashboard goes. ctx: the view's ctx (store, client, info, params).
 * opts.charts: [{title, keys: [{key, name, color?, dash?, markers?}] or () => keys, logY?, legend? (always above the plot),
 *   kept?: false, keptKey?, yaxis?, cls?, hint?}] (logY and legend may be functions, logY 'positive':
 *   a log axis while every value drawn is above 0, else linear; kept runs draw on
 *   the chart's `keptKey`, else its first key; yaxis: extra plotly y-axis layout, e.g. a range;
 *   cls: a class for the chart's panel; hint: its hint's i18n key)
 * opts.waterfall (true), opts.readout ((frame, arms) => extra rows, or false: no readout panel),
 * opts.keep (true: the Keep button), opts.curvesMs (how often the curves take new rows),
 * opts.armTitles (name arms by their zh/en `title` from frame meta, not their label),
 * opts.className (the view's class on the dashboard's element: the view needs no wrapper).
 */
export function dashboard(root, ctx, opts = {}) {
  const { store, client, info } = ctx;
  const {
    charts = [{ title: 'dash.loss', keys: [{ key: 'loss', name: 'dash.train_loss' }], logY: true }],
    waterfall: withWaterfall = true, readout: extraRows = () => [], keep: withKeep = true, curvesMs = 300,
    armTitles = false, className = '',
  } = opts;
  ensureCss('/css/map-grid.css'); // the kit's styles (the bar, the kept chips, the waterfall)
  const el = div(`dashboard ${className}`.trim());
  root.append(el);
  const bar = div('dash-bar');
  const picturesEl = div('view-grid dash-pictures');
  const grid = div('view-grid dash-grid');
  el.append(bar, picturesEl, grid);

  let arms = []; // [{label, title, diverged}]
  let armsFromMeta = false;
  let rows = []; // this run's rows {step, values}
  let kept = []; // runs as the server sends them
  let keptRows = []; // their rows as {step, values: {kept.<j>.<name>: v}}
  let serverKeeps = false; // the session answers `keep` (ready carries `kept`)
  let localId = 0;
  let lastFrame = null;

  // -- curves -------------------------------------------------------------------------------
  const keysOf = (c) => (typeof c.keys === 'function' ? c.keys() : c.keys);
  const nameOf = (key) => (typeof key.name === 'function' ? key.name() : t(key.name || key.key));
  // An arm's name in legends and the readout: its label (MHA, Adam), or with armTitles its
  // zh/en title from frame meta where the lab gives one (a lab whose titles are names, not
  // descriptions: optimizers' "Adam without bias correction").
  // armTitles 'zh': the title on zh pages only (an English label such as "plain" stays in en).
  const titled = () => armTitles === true || (armTitles === 'zh' && currentLang() === 'zh');
  const armLabel = (i) => (arms[i] ? (titled() && pick(arms[i].title)) || arms[i].label : t('dash.arm', { i }));
  const many = () => arms.length > 1;
  const scalar = (i, key) => (many() ? `arm.${i}.${key}` : key);

  function keptName(run) {
    // The session names a run it keeps #1, #2...: "kept run #1"; a label the learner gave stays.
    const base = !run.label ? t('dash.kept_run') : /^#\d+$/.test(run.label) ? `${t('dash.kept_run')} ${run.label}` : run.label;
    const diff = paramDiff(run.params, ctx.params(), info && info.schema);
    return diff ? t('dash.kept_with', { label: base, diff }) : base;
  }

  function keptTraces(c) {
    const first = keysOf(c).find((k) => k.key === c.keptKey) || keysOf(c)[0];
    if (!first || c.kept === false) return [];
    const out = [];
    kept.forEach((run, j) => {
      const names = run.armKeys[first.key] || [];
      names.forEach(({ name, arm }) => out.push({
        key: `kept.${j}.${name}`,
        name: arm === null ? keptName(run) : `${keptName(run)} · ${armLabel(arm)}`,
        color: arm === null ? KEPT_GREY : fade(COLORS[arm % COLORS.length]),
        dash: j ? 'dot' : 'dash',
      }));
    });
    return out;
  }

  function traces(c) {
    const keys = keysOf(c);
    const out = [];
    const n = Math.max(1, arms.length);
    for (let i = 0; i < n; i++) {
      keys.forEach((k, ki) => {
        const diverged = many() && arms[i]?.diverged ? t('dash.diverged_tag') : '';  // zh: full-width （）
        out.push({
          key: scalar(i, k.key),
          name: many() ? `${armLabel(i)}${keys.length > 1 ? ` · ${nameOf(k)}` : ''}${diverged}` : nameOf(k),
          color: many() ? COLORS[i % COLORS.length] : k.color || COLORS[ki % COLORS.length],
          dash: many() && ki ? k.dash || 'dot' : k.dash,
          markers: k.markers,
        });
      });
    }
    return [...out, ...keptTraces(c)];
  }

  const boxes = charts.map((c) => {
    const p = panel(grid, typeof c.title === 'string' ? c.title : null, { hint: c.hint || null });
    p.el.classList.add('dash-chart');
    if (c.cls) p.el.classList.add(c.cls);
    return { spec: c, panel: p, chart: null, sig: null };
  });

  function ensure(b) {
    const tr = traces(b.spec);
    const val = (x) => (typeof x === 'function' ? x() : x);
    const logY = b.spec.logY === 'positive' ? allPositive(b, tr) : !!val(b.spec.logY);
    const sig = JSON.stringify([tr, logY, val(b.spec.legend)]);
    if (sig === b.sig) return false;
    b.sig = sig;
    // Every legend sits above its plot, never over the curves ('low' and 'above' are older
    // names for the same place); plotly widens the top margin to fit its rows.
    const legend = { orientation: 'h', x: 0, xanchor: 'left', y: 1.02, yanchor: 'bottom', font: { size: 11 } };
    // The rows so far are drawn with the new chart at once, never queued behind other charts'
    // redraws (a fork rebuilds every chart: one waiting its turn would stay empty for seconds).
    const all = [...keptRows, ...rows.slice(0, rows.length - pending.length)]; // pending rows: added at the flush
    b.chart = lineChart(b.panel.chart, { traces: tr, logY, xTitle: 'step', legend, yaxis: b.spec.yaxis, rows: all }); // replaces the old plot
    return true;
  }
  // Are all the chart's values so far above 0 (a log axis would drop the others)? The rows
  // are scanned once each: only those added since the last look (all again after a reset).
  function allPositive(b, tr) {
    const scan = b.scan && b.scan.kept === keptRows && b.scan.of === rows ? b.scan : null;
    const check = (list) => list.some((r) => tr.some(({ key }) => r.values[key] <= 0));
    b.scan = scan || { kept: keptRows, of: rows, done: 0, bad: check(keptRows) };
    if (!b.scan.bad) b.scan.bad = check(rows.slice(b.scan.done));
    b.scan.done = rows.length;
    return !b.scan.bad;
  }
  const ensureAll = () => boxes.forEach(ensure);
  const rebuild = () => { boxes.forEach((b) => { b.sig = null; }); ensureAll(); };

  let pending = [];
  let timer = null;
  const flush = () => {
    timer = null;
    const batch = pending;
    pending = [];
    for (const b of boxes) if (!ensure(b) && batch.length) b.chart.add(batch);
    if (wf && batch.length) wf.add(batch);
  };

  // -- waterfall, readout -------------------------------------------------------------------
  let wf = null;
  let pWf = null;
  if (withWaterfall) {
    pWf = panel(grid, 'dash.grad', { chart: false });
    pWf.el.classList.add('dash-waterfall');
    wf = makeWaterfall(pWf.body);
  }
  let pRead = null;
  let ro = null;
  if (extraRows !== false) {
    pRead = panel(grid, 'dash.readout', { chart: false, now: true }); // "Now", or the past step shown
    pRead.el.classList.add('dash-readout');
    ro = makeReadout(pRead.body);
  }

  function rowAt(step) {
    for (let i = rows.length - 1; i >= 0 && rows[i].step >= step; i--) if (rows[i].step === step) return rows[i];
    return undefined;
  }

  function showReadout() {
    if (!ro) return;
    const f = lastFrame;
    const out = [];
    const last = rows[rows.length - 1];
    const step = f ? f.step : last?.step;
    if (step !== undefined) out.push({ label: t('dash.step'), value: String(step) });
    const first = keysOf(charts[0] || { keys: [] })[0];
    // A frame's own scalars, over its step's row: the frame sent on pause is a snapshot
    // whose scalars carry no training loss, which the step's row does.
    const row = f ? rowAt(f.step) : last;
    const values = { ...(row?.values || {}), ...((f && f.scalars) || {}) };
    if (first) {
      const n = Math.max(1, arms.length);
      for (let i = 0; i < n; i++) {
        const v = values[scalar(i, first.key)];
        if (v === undefined && !many()) continue;
        out.push({
          label: many() ? `${armLabel(i)} · ${nameOf(first)}` : nameOf(first),
          value: v === undefined ? '–' : v,
          warn: !!arms[i]?.diverged || (v !== undefined && !finite(v)),
          note: arms[i]?.diverged ? t('dash.diverged') : '',
        });
      }
    }
    if (f && typeof extraRows === 'function') out.push(...extraRows(f, arms));
    ro.show(out);
  }

  // -- arms ---------------------------------------------------------------------------------
  function setArms(next, fromMeta) {
    const same = JSON.stringify(next) === JSON.stringify(arms);
    armsFromMeta = armsFromMeta || fromMeta;
    if (same) return;
    arms = next;
    nameWaterfall();
    rebuild();
  }
  const nameWaterfall = () => wf?.setArms(arms.map((a, i) => ({ ...a, label: armLabel(i) }))); // as the legends
  function armsFromRows(newRows) {
    if (armsFromMeta) return;
    let most = -1;
    for (const k of Object.keys(newRows[newRows.length - 1].values)) {
      const m = armOf.exec(k);
      if (m) most = Math.max(most, Number(m[1]));
    }
    if (most > 0 && most + 1 !== arms.length) setArms(Array.from({ length: most + 1 }, (_, i) => ({ label: t('dash.arm', { i }) })), false);
  }

  // -- kept runs ----------------------------------------------------------------------------
  const keepBtn = document.createElement('button');
  keepBtn.type = 'button';
  keepBtn.className = 'dash-keep';
  keepBtn.dataset.act = 'keep';
  keepBtn.onclick = () => keep();
  const keptList = document.createElement('span');
  keptList.className = 'dash-kept-list';
  if (withKeep) bar.append(keepBtn, keptList);
  else bar.hidden = true;
  const driver = () => store.get('role') === 'driver';

  function renderBar() {
    keepBtn.textContent = t('dash.keep');
    keepBtn.title = t('dash.keep_title');
    keepBtn.hidden = !driver() || !!store.get('readOnly');
    keepBtn.disabled = !rows.length;
    keptList.replaceChildren();
    if (!kept.length) return;
    const head = document.createElement('span');
    head.textContent = t('dash.kept');
    keptList.append(head);
    for (const run of kept) {
      const chip = document.createElement('span');
      chip.className = 'dash-kept';
      chip.append(document.createTextNode(keptName(run)));
      if (driver()) {
        const x = document.createElement('button');
        x.type = 'button';
        x.textContent = '×';
        x.setAttribute('aria-label', t('dash.unkeep', { label: keptName(run) }));
        x.onclick = () => unkeep(run.id);
        chip.append(x);
      }
      keptList.append(chip);
    }
  }

  /** runs: [{id, label, params, seed, rows: [[step, {scalars}], ...]}] (the `kept` message). */
  function setKept(runs) {
    kept = (runs || []).slice(-MAX_KEPT).map((run) => {
      const armKeys = {}; // chart key -> [{name, arm}] present in this run's rows
      const wanted = new Set(charts.flatMap((c) => keysOf(c).map((k) => k.key)));
      const seen = new Set();
      for (const [, values] of run.rows || []) for (const k of Object.keys(values)) seen.add(k);
      for (const key of wanted) {
        const own = [];
        for (const name of seen) {
          const m = /^arm\.(\d+)\.(.+)$/.exec(name);
          if (m && m[2] === key) own.push({ name, arm: Number(m[1]) });
        }
        armKeys[key] = own.length ? own.sort((a, b) => a.arm - b.arm) : seen.has(key) ? [{ name: key, arm: null }] : [];
      }
      return { ...run, armKeys };
    });
    keptRows = [];
    kept.forEach((run, j) => {
      for (const [step, values] of run.rows || []) {
        const v = {};
        for (const [k, x] of Object.entries(values)) v[`kept.${j}.${k}`] = num(x);
        keptRows.push({ step, values: v });
      }
    });
    rebuild();
    renderBar();
  }

  /** Keep the current run (the session keeps it; an older server: this page keeps it). */
  function keep() {
    if (!rows.length) return;
    if (serverKeeps) { client.control('keep'); return; }
    const run = { id: `local-${++localId}`, label: '', params: { ...ctx.params() }, seed: store.get('seed'), rows: rows.map((r) => [r.step, r.values]) };
    setKept([...kept, run]);
  }
  function unkeep(id) {
    if (serverKeeps) { client.control('unkeep', { id }); return; }
    setKept(kept.filter((r) => r.id !== id));
  }

  client.on('ready', (m) => {
    if (!('kept' in m)) return;
    serverKeeps = true;
    setKept(m.kept);
  });
  client.on('kept', (m) => { serverKeeps = true; setKept(m.runs); });
  store.on('role', renderBar);
  store.on('readOnly', renderBar);
  store.on('params', () => { if (kept.length) { rebuild(); renderBar(); } });

  ensureAll();
  renderBar();

  return {
    el, grid, picturesEl, bar,
    panels: boxes.map((b) => b.panel),
    get readout() { return ro; },
    get waterfall() { return wf; },
    get arms() { return arms; },
    get kept() { return kept; },
    /** Scalar rows {step, values} of this run (the view's `scalars`). */
    onScalars(newRows) {
      if (!newRows.length) return;
      const first = !rows.length;
      rows.push(...newRows);
      armsFromRows(newRows);
      pending.push(...newRows);
      if (!timer) timer = setTimeout(flush, first ? 0 : curvesMs);
      if (first) renderBar();
      if (!lastFrame) showReadout();
    },
    /** A training frame (the view's `frame`): arms from meta, the readout. */
    onFrame(f) {
      if (f.meta && Array.isArray(f.meta.arms)) setArms(f.meta.arms.map((a) => ({ label: a.label, title: a.title, diverged: !!a.diverged })), true);
      lastFrame = f;
      showReadout();
    },
    /** A new run (the view's `reset`). */
    reset() {
      clearTimeout(timer);
      timer = null;
      pending = [];
      rows = [];
      lastFrame = null;
      wf?.clear();
      rebuild();
      renderBar();
      ro?.show([]);
    },
    setKept,
    keep,
    unkeep,
    /** Rebuild the charts if a chart's keys() changed (e.g. a new data kind). */
    refresh: ensureAll,
    relabel() {
      for (const b of boxes) b.panel.relabel();
      pWf?.relabel();
      pRead?.relabel();
      rebuild();
      nameWaterfall();
      wf?.redraw();
      renderBar();
      showReadout();
    },
  };
}
