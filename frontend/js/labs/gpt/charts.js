// The `gpt` view's curves: loss (with the previous run dashed, for the leak comparison),
// accuracy or perplexity, and gradient norms per layer group. Their traces depend on the
// run (task or text, number of layers), so each chart is rebuilt when its trace set changes
// and refilled from the run's rows.
import { t } from '../../core/i18n.js';
import { lineChart } from '../../components/lineChart.js';

const GREY = '#8a8f98';

/** A lineChart whose trace list comes from spec(); rebuilt (and refilled) when it changes. */
function rebuildable(el, spec) {
  let sig = null;
  let chart = null;
  return {
    /** Rebuild if the trace set changed, refilled with rows() (called only then). */
    ensure(rows) {
      const s = spec();
      const key = JSON.stringify([s.traces.map((tr) => [tr.key, tr.name]), s.logY]);
      if (key === sig) return false;
      sig = key;
      // Falling curves leave the top right free for the legend; rising ones the bottom right.
      const legend = { orientation: 'v', x: 1, xanchor: 'right', y: s.legendLow ? 0.05 : 1, yanchor: s.legendLow ? 'bottom' : 'top', bgcolor: 'rgba(255,255,255,0.75)', font: { size: 11 } };
      chart = lineChart(el, { traces: s.traces, logY: s.logY, xTitle: 'step', legend }); // replaces the old plot
      const all = rows();
      if (all.length) chart.add(all);
      return true;
    },
    add(rows) { chart?.add(rows); },
    invalidate() { sig = null; },
    get chart() { return chart; },
  };
}

export function trainingCharts({ lossEl, metricEl, gradEl }) {
  let kind = 'task';
  let gradKeys = [];
  let rows = []; // this run's rows
  let prev = null; // {rows, label}: the previous run's loss, drawn dashed

  const loss = rebuildable(lossEl, () => ({
    traces: [
      { key: 'loss', name: t('gpt.train_loss') },
      { key: 'val_loss', name: t('gpt.val_loss'), color: '#e8702a', markers: true },
      ...(prev ? [{ key: 'prev_loss', name: prev.label(), color: GREY, dash: 'dash' }] : []),
    ],
    logY: true,
  }));
  const metric = rebuildable(metricEl, () => (kind === 'text'
    ? { traces: [{ key: 'ppl', name: t('gpt.ppl') }, { key: 'val_ppl', name: t('gpt.val_ppl'), color: '#e8702a', markers: true }], logY: true }
    : {
      traces: [
        { key: 'seq_acc', name: t('gpt.seq_acc'), color: '#1a9e77', markers: true },
        { key: 'acc', name: t('gpt.acc'), color: '#2f6fdf', markers: true },
        { key: 'train_seq_acc', name: t('gpt.train_seq_acc'), color: '#9aa0a8' },
      ],
      logY: false,
      legendLow: true,
    }));
  const grad = rebuildable(gradEl, () => ({
    traces: gradKeys.map((k) => ({ key: `grad_norm.${k}`, name: k })),
    logY: true,
  }));

  const prevRows = () => (prev ? prev.rows.map((r) => ({ step: r.step, values: { prev_loss: r.values.loss } })) : []);
  const lossRows = () => [...prevRows(), ...rows];
  const runRows = () => rows;
  const refillLoss = () => {
    loss.invalidate();
    loss.ensure(lossRows);
  };

  return {
    /** The data kind of the run ('task' or 'text'): picks accuracy or perplexity. */
    setKind(k) {
      if (k === kind) return;
      kind = k;
      metric.ensure(runRows);
    },
    add(newRows) {
      rows.push(...newRows);
      const keys = [];
      for (const k of Object.keys(newRows[newRows.length - 1].values)) if (k.startsWith('grad_norm.')) keys.push(k.slice(10));
      if (keys.length && keys.join() !== gradKeys.join()) {
        gradKeys = keys;
        grad.ensure(runRows);
      } else grad.add(newRows);
      if (!loss.ensure(lossRows)) loss.add(newRows);
      if (!metric.ensure(runRows)) metric.add(newRows);
    },
    /** A new run: keep the old loss curve (if it went anywhere) as the dashed comparison. */
    reset() {
      if (rows.length > 5) prev = { rows, label: () => t('gpt.prev_run') };
      rows = [];
      refillLoss();
      metric.invalidate();
      metric.ensure(runRows);
      grad.invalidate();
      grad.ensure(runRows);
    },
    /** Name the previous run by what differed (label() is called on every redraw, in the current language). */
    labelPrevious(label) {
      if (!prev) return;
      prev.label = label;
      refillLoss();
    },
    get hasPrevious() { return !!prev; },
    relabel() {
      loss.invalidate(); metric.invalidate(); grad.invalidate();
      loss.ensure(lossRows);
      metric.ensure(runRows);
      grad.ensure(runRows);
    },
    init() {
      loss.ensure(lossRows);
      metric.ensure(runRows);
      grad.ensure(runRows);
    },
  };
}
