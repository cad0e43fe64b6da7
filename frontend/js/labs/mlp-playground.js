// View of `mlp-playground`, on the training dashboard: the network as playground draws it
// (every node a heatmap of its output over the plane, every weight a curve you can click and
// edit) and the decision region with the points (click to add your own) are its pictures;
// the dashboard draws train/test cross-entropy (with kept runs) and the per-layer gradient
// waterfall. Everything drawn arrives in the server's frames.
import { addStrings } from '../core/i18n.js';
import { boundaryCanvas, CLASS_COLORS, CLASS_LUTS, TWO } from '../components/boundaryCanvas.js';
import { addPoint, removeNearest } from '../components/boundaryPlot.js';
import { dashboard } from '../components/dashboard.js';
import { readout } from '../components/readout.js';
import { panel } from '../components/panel.js';
import { networkDiagram } from '../components/networkDiagram.js';
import { throttleFrame } from '../components/plot.js';

const ID = 'mlp-playground';
export const stylesheet = '/css/labs/mlp-playground.css'; // the shell loads it
const FEATURES = [['x1', 'X₁'], ['x2', 'X₂'], ['x1sq', 'X₁²'], ['x2sq', 'X₂²'], ['x1x2', 'X₁X₂'], ['sinx1', 'sin X₁'], ['sinx2', 'sin X₂']];
const MAX_POINTS = 200;

addStrings({
  en: {
    [`${ID}.err_range`]: 'A weight must lie in [−{limit}, {limit}]',
    [`${ID}.network`]: 'The network: each square is what that unit outputs over the plane',
    [`${ID}.net_hint`]: 'Blue is positive, orange negative; a thicker curve is a larger weight. Click a curve (or a unit) to type its weight (bias); click an input to switch it on or off.',
    [`${ID}.output`]: 'Output: the model’s decision over the plane',
    [`${ID}.out_hint`]: 'Click to add a point of the chosen class to the training set; shift-click removes your nearest one.',
    [`${ID}.loss`]: 'Cross-entropy: training vs. test',
    [`${ID}.train`]: 'training',
    [`${ID}.test`]: 'test',
    [`${ID}.add`]: 'Click adds:',
    [`${ID}.class`]: 'class {c}',
    [`${ID}.clear`]: 'Clear my points',
    [`${ID}.train_loss`]: 'Training loss',
    [`${ID}.test_loss`]: 'Test loss',
    [`${ID}.train_acc`]: 'Training accuracy',
    [`${ID}.test_acc`]: 'Test accuracy',
    [`${ID}.epoch`]: 'Epochs',
    [`${ID}.reg`]: 'Regularization term',
    [`${ID}.points`]: 'Points (train / test / yours)',
    [`${ID}.no_points`]: 'No points yet: click the output to draw some.',
    [`${ID}.loss_kind2`]: 'binary cross-entropy on one logit',
    [`${ID}.loss_kindk`]: 'softmax cross-entropy over {k} classes',
  },
  zh: {
    [`${ID}.err_range`]: '权重必须在 [−{limit}, {limit}] 之内',
    [`${ID}.network`]: '网络：每个小方块是该神经元在整个平面上的输出',
    [`${ID}.net_hint`]: '蓝色为正、橙色为负，线越粗权重越大。点击一条连线（或一个神经元）可以输入新的权重（偏置）；点击输入可开关它。',
    [`${ID}.output`]: '输出：模型在平面上的判断',
    [`${ID}.out_hint`]: '点击平面，把所选类别的点加入训练集；按住 Shift 点击删除离你最近的自己加的点。',
    [`${ID}.loss`]: '交叉熵：训练集与测试集',
    [`${ID}.train`]: '训练集',
    [`${ID}.test`]: '测试集',
    [`${ID}.add`]: '点击添加：',
    [`${ID}.class`]: '类别 {c}',
    [`${ID}.clear`]: '清除我加的点',
    [`${ID}.train_loss`]: '训练损失',
    [`${ID}.test_loss`]: '测试损失',
    [`${ID}.train_acc`]: '训练准确率',
    [`${ID}.test_acc`]: '测试准确率',
    [`${ID}.epoch`]: '轮数（epoch）',
    [`${ID}.reg`]: '正则项',
    [`${ID}.points`]: '点数（训练 / 测试 / 你加的）',
    [`${ID}.no_points`]: '还没有点：在输出图上点击来画点。',
    [`${ID}.loss_kind2`]: '单个 logit 上的二元交叉熵',
    [`${ID}.loss_kindk`]: '{k} 个类别的 softmax 交叉熵',
  },
});

export default function mount(root, ctx) {
  const { t, store, setParams, infer } = ctx;
  root.innerHTML = '';
  const dash = dashboard(root, ctx, {
    className: 'mlp-pg',
    charts: [{
      title: `${ID}.loss`, cls: 'pg-loss', logY: true,
      keys: [{ key: 'loss', name: `${ID}.train`, color: '#1d2330' }, { key: 'test_loss', name: `${ID}.test`, color: '#e8702a', dash: 'dot' }],
    }],
    readout: false, // the lab's own readout follows the charts
  });
  const pNet = panel(dash.picturesEl, `${ID}.network`, { chart: false, wide: true, hint: `${ID}.net_hint` });
  const pOut = panel(dash.grid, `${ID}.output`, { chart: false, hint: `${ID}.out_hint` });
  dash.grid.prepend(pOut.el); // the decision region, then the curves beside it
  const pRead = panel(dash.grid, null, { chart: false });
  pOut.el.classList.add('pg-output');

  const driver = () => store.get('role') === 'driver';
  const params = () => store.get('params');
  const diagram = networkDiagram(pNet.body, {
    limit: 10,
    onEditWeight: (layer, i, j, value) => infer({ action: 'set_weight', layer, i, j, value }),
    onEditBias: (layer, i, value) => infer({ action: 'set_bias', layer, i, value }),
    onToggleInput: (name) => setParams({ [name]: !params()[name] }),
    onHidden: (hidden) => setParams({ hidden }),
  });

  const tools = document.createElement('div');
  tools.className = 'pg-tools';
  const plane = document.createElement('div');
  plane.className = 'pg-plane';
  pOut.body.append(tools, plane);
  let drawClass = 1;
  const boundary = boundaryCanvas(plane, { onClick: (x1, x2, ev) => clickPlane(x1, x2, ev) });

  const info = readout(pRead.body);
  let last = null;

  function renderTools(k) {
    tools.replaceChildren();
    const lab = document.createElement('span');
    lab.textContent = t(`${ID}.add`);
    tools.append(lab);
    drawClass = Math.min(drawClass, k - 1);
    for (let c = 0; c < k; c++) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'pg-class';
      b.dataset.cls = String(c);
      b.setAttribute('aria-pressed', String(c === drawClass));
      const dot = document.createElement('i');
      dot.className = 'dot';
      dot.style.background = CLASS_COLORS[c]; // CSSOM: allowed by the content security policy
      b.append(dot, document.createTextNode(t(`${ID}.class`, { c })));
      b.disabled = !driver();
      b.onclick = () => { drawClass = c; renderTools(k); };
      tools.append(b);
    }
    const clear = document.createElement('button');
    clear.type = 'button';
    clear.className = 'pg-clear';
    clear.textContent = t(`${ID}.clear`);
    clear.disabled = !driver() || !params().points.length;
    clear.onclick = () => setParams({ points: [] });
    tools.append(clear);
  }

  function clickPlane(x1, x2, ev) {
    if (!driver()) return;
    const pts = params().points;
    if (ev.shiftKey && !pts.length) return;
    setParams({ points: ev.shiftKey ? removeNearest(pts, x1, x2) : addPoint(pts, Number(x1.toFixed(2)), Number(x2.toFixed(2)), drawClass, MAX_POINTS) });
  }

  function net(f) {
    const m = f.meta, p = params();
    const enabled = FEATURES.filter(([name]) => m.features.includes(name)).map(([name]) => name);
    const K = m.classes;
    const b = f.tensors.boundary;
    const outputs = K === 2
      ? [{ label: '', map: { tensor: b, k: 1, lut: TWO, range: [0, 1] } }]
      : Array.from({ length: K }, (_, c) => ({ label: String(c), map: { tensor: b, k: c, lut: CLASS_LUTS[c % CLASS_LUTS.length], range: [0, 1] } }));
    const L = m.hidden.length;
    return {
      inputs: FEATURES.map(([name, label]) => ({
        name, label, enabled: !!p[name] && enabled.includes(name),
        map: enabled.includes(name) ? { tensor: f.tensors.inputs, k: enabled.indexOf(name), range: [-1, 1] } : null,
      })),
      hidden: m.hidden.map((w, i) => ({ width: w, maps: f.tensors[`layers.${i}.hook_post`] })),
      outputs,
      weights: Array.from({ length: L + 1 }, (_, i) => f.tensors[`weights.${i}`]),
      biases: Array.from({ length: L + 1 }, (_, i) => f.tensors[`biases.${i}`]),
    };
  }

  const drawAll = throttleFrame(() => {
    const f = last;
    if (!f || !f.tensors.boundary) return;
    const m = f.meta, p = params();
    diagram.draw(net(f));
    boundary.draw({
      probs: f.tensors.boundary, train: f.tensors.train_points, test: f.tensors.test_points,
      extent: m.extent, classes: m.classes, showTest: p.show_test, discretize: p.discretize, mine: m.n_mine,
    });
    const s = f.scalars;
    const rowsOut = [];
    if (!m.n_train) rowsOut.push({ label: '⚠', value: t(`${ID}.no_points`), warn: true });
    if (s.loss !== undefined) rowsOut.push({ label: t(`${ID}.train_loss`), value: s.loss, note: m.classes === 2 ? t(`${ID}.loss_kind2`) : t(`${ID}.loss_kindk`, { k: m.classes }) });
    if (s.test_loss !== undefined) rowsOut.push({ label: t(`${ID}.test_loss`), value: s.test_loss });
    if (s.train_acc !== undefined) rowsOut.push({ label: t(`${ID}.train_acc`), value: `${(100 * s.train_acc).toFixed(1)}%` });
    if (s.test_acc !== undefined) rowsOut.push({ label: t(`${ID}.test_acc`), value: `${(100 * s.test_acc).toFixed(1)}%` });
    if (s.epoch !== undefined) rowsOut.push({ label: t(`${ID}.epoch`), value: s.epoch });
    if (s.reg !== undefined) rowsOut.push({ label: t(`${ID}.reg`), value: s.reg });
    rowsOut.push({ label: t(`${ID}.points`), value: `${m.n_train - m.n_mine} / ${m.n_test} / ${m.n_mine}` });
    info.show(rowsOut);
    if (tools.dataset.k !== String(m.classes) || tools.dataset.mine !== String(p.points.length)) {
      tools.dataset.k = String(m.classes);
      tools.dataset.mine = String(p.points.length);
      renderTools(m.classes);
    }
  });

  const onRole = () => { diagram.setReadOnly(!driver()); tools.dataset.k = ''; drawAll(); };
  store.on?.('role', onRole);
  new ResizeObserver(() => drawAll()).observe(pNet.body);

  return {
    frame(f) {
      last = f;
      dash.onFrame(f);
      drawAll();
    },
    scalars(rows) { dash.onScalars(rows); },
    reset() { dash.reset(); },
    params() { drawAll(); },
    relabel() {
      for (const p of [pNet, pOut]) p.relabel();
      dash.relabel();
      diagram.relabel();
      tools.dataset.k = '';
      drawAll();
    },
  };
}
