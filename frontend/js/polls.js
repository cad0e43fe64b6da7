// Predict, then run: the teacher asks the class (choices, or a number the run will reach),
// students vote from their phones, the teacher's screen shows the class's bars, "run it"
// plays the experiment and the result is marked against them. The chart draws what the
// server's `poll_state` says (docs/polls.md): the page never counts votes itself.
import { newSessionId } from './core/client.js';
import { ensureCss } from './core/css.js';
import { addStrings, lang, t } from './core/i18n.js';
import { lessonPoll, lessonRevealPending, lessonRunIt } from './lesson.js';

ensureCss('/css/polls.css');

addStrings({
  en: {
    'poll.ask': 'Ask the class', 'poll.question': 'Question', 'poll.kind_choices': 'Choices',
    'poll.kind_numeric': 'A number the run will reach', 'poll.choice_n': 'Choice {n}',
    'poll.metric': 'Value', 'poll.at_step': 'at step', 'poll.send': 'Ask', 'poll.cancel': 'Cancel',
    'poll.run_it': 'Run it', 'poll.close': 'Close voting', 'poll.hide': 'Hide',
    'poll.voters': '{n} students answered', 'poll.voters.one': '1 student answered',
    'poll.open': 'Voting is open', 'poll.closed': 'Voting closed',
    'poll.mark_hint': 'After the run, click the right answer to mark it.',
    'poll.correct': 'right answer', 'poll.truth': 'The run reached {value} at step {step}',
    'poll.waiting_truth': 'The true value appears when the run reaches step {step}.',
    'poll.your_vote': 'Your answer is highlighted; you can change it until voting closes.',
    'poll.your_guess': 'Your guess: {value}', 'poll.guess': 'Your guess', 'poll.send_guess': 'Send',
    'poll.numeric_q': '{metric} at step {step}?',
    'poll.err_none': 'There is no poll open in this class right now.',
    'poll.err_closed': 'Voting on this question has closed.',
    'poll.err_stale': 'That question is over; answer the new one.',
    'poll.err_choice': 'That is not one of the choices.',
    'poll.err_kind': 'This question takes a different kind of answer.',
    'poll.err_past': 'The run is already past that step: reset it, then ask.',
    'poll.err_metric': 'This lab does not stream that value.',
    'poll.alone_open': 'Your prediction', 'poll.alone_closed': 'The run answers',
    'poll.alone_hint': 'Pick what you think will happen, then run it.',
    'poll.alone_hint_numeric': 'Type your guess, then run it.',
    'poll.your_pick': 'your pick',
    'poll.alone_right': 'You predicted it: {answer}.',
    'poll.alone_wrong': 'You picked “{mine}”; the answer is “{answer}”.',
    'poll.alone_skipped': 'The answer is “{answer}”.',
    'poll.alone_no_answer': 'You picked “{mine}”. Watch the run: were you right?',
    'poll.alone_off': 'Your guess {mine} was off by {diff}.',
    'poll.answer_after_run': 'The answer is marked when the run shows it.',
    'poll.sum_mine': 'you picked “{mine}”', 'poll.sum_answer': 'answer “{answer}”',
    'poll.sum_wait': 'the run will tell', 'poll.sum_none': 'you did not vote',
    'poll.sum_truth': 'the run: {value} at step {step}',
  },
  zh: {
    'poll.ask': '向全班提问', 'poll.question': '问题', 'poll.kind_choices': '选择题',
    'poll.kind_numeric': '预测训练会达到的数值', 'poll.choice_n': '选项 {n}',
    'poll.metric': '数值', 'poll.at_step': '在第几步', 'poll.send': '提问', 'poll.cancel': '取消',
    'poll.run_it': '运行看看', 'poll.close': '结束投票', 'poll.hide': '收起',
    'poll.voters': '已有 {n} 位同学作答', 'poll.open': '投票进行中', 'poll.closed': '投票已结束',
    'poll.mark_hint': '运行之后，点一下正确答案把它标出来。',
    'poll.correct': '正确答案', 'poll.truth': '训练在第 {step} 步时的实际值是 {value}',
    'poll.waiting_truth': '训练跑到第 {step} 步时，这里会画出真实值。',
    'poll.your_vote': '你的选择已高亮；投票结束前可以随时改。',
    'poll.your_guess': '你的预测：{value}', 'poll.guess': '你的预测', 'poll.send_guess': '提交',
    'poll.numeric_q': '第 {step} 步时 {metric} 是多少？',
    'poll.err_none': '这个课堂现在没有进行中的提问。',
    'poll.err_closed': '这道题的投票已经结束了。',
    'poll.err_stale': '这道题已经结束，请回答新的题目。',
    'poll.err_choice': '这不是题目里的选项。',
    'poll.err_kind': '这道题需要另一种答案。',
    'poll.err_past': '训练已经过了那一步：先重置，再提问。',
    'poll.err_metric': '这个实验没有输出这个数值。',
    'poll.alone_open': '你的预测', 'poll.alone_closed': '运行揭晓',
    'poll.alone_hint': '先选出你认为会发生的情况，再点“运行看看”。',
    'poll.alone_hint_numeric': '先填上你的预测，再点“运行看看”。',
    'poll.your_pick': '你的选择',
    'poll.alone_right': '猜对了：{answer}。',
    'poll.alone_wrong': '你选的是“{mine}”，正确答案是“{answer}”。',
    'poll.alone_skipped': '正确答案是“{answer}”。',
    'poll.alone_no_answer': '你选的是“{mine}”。看看运行的结果：你猜对了吗？',
    'poll.alone_off': '你的预测 {mine} 与实际值相差 {diff}。',
    'poll.answer_after_run': '训练跑出结果时，会标出正确答案。',
    'poll.sum_mine': '你选了“{mine}”', 'poll.sum_answer': '答案“{answer}”',
    'poll.sum_wait': '等训练揭晓', 'poll.sum_none': '你没有投票',
    'poll.sum_truth': '训练在第 {step} 步时是 {value}',
  },
});

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const fmt = (v) => (typeof v === 'number' ? Number(v.toPrecision(4)).toString() : String(v));

/** This browser's voter id: a student who reloads or reconnects keeps one vote. */
function voterId() {
  let id = localStorage.getItem('shaomai:voter');
  if (!id) { id = newSessionId(); localStorage.setItem('shaomai:voter', id); }
  return id;
}
const mineKey = (poll) => `shaomai:vote:${poll}`;

export function polls({ store, client }) {
  const panel = el('section', 'poll-panel');
  panel.setAttribute('aria-live', 'polite');
  panel.hidden = true;
  const askBtn = el('button', 'poll-ask');
  askBtn.type = 'button';
  askBtn.dataset.act = 'poll-ask';
  askBtn.hidden = true;
  const form = askForm(client, store, () => { form.hidden = true; });
  form.hidden = true;
  askBtn.onclick = () => { form.hidden = !form.hidden; if (!form.hidden) form.querySelector('input').focus(); };
  const stage = document.querySelector('#stage');
  stage.insertBefore(panel, document.querySelector('#view'));
  stage.insertBefore(form, panel);
  // Inside the class tools, at their end: it moves with them (a phone's slot under the
  // picture) and never between the toolbar's rows as the run's state text changes width.
  document.querySelector('#class-tools')?.append(askBtn);
  let state = null;
  let hidden = null; // the poll id the teacher hid
  let draft = null; // a guess being typed: kept when others' votes redraw the panel

  const driver = () => store.get('role') === 'driver';
  // A learner alone (the driver of a session nobody joined) predicts for themselves.
  const alone = () => driver() && !store.get('shareCode');
  const render = () => {
    const typing = document.activeElement?.closest?.('.poll-guess') != null;
    askBtn.hidden = !driver() || !!store.get('readOnly');
    askBtn.textContent = t('poll.ask');
    form.relabel();
    panel.replaceChildren();
    panel.hidden = !state || hidden === state.id;
    if (panel.hidden) return;
    panel.dataset.open = state.open ? '1' : '';
    panel.dataset.folded = '';
    panel.dataset.kind = state.metric ? 'numeric' : 'choices';
    panel.dataset.mode = alone() ? 'alone' : driver() ? 'teacher' : 'student';
    const head = el('div', 'poll-head');
    const status = alone() ? (state.open ? 'poll.alone_open' : 'poll.alone_closed') : state.open ? 'poll.open' : 'poll.closed';
    head.append(el('h3', 'poll-q', state.question), el('span', 'poll-status', t(status)));
    panel.append(head);
    if (alone()) aloneView();
    else if (driver()) return teacherView();
    else studentView();
    if (typing) panel.querySelector('.poll-guess input')?.focus();
  };

  // A vote as this browser's student; kept in localStorage so their pick stays highlighted.
  const vote = (body, keep) => {
    if (!client.send({ type: 'vote', ...body, poll: state.id, voter: voterId() })) return false;
    draft = null;
    localStorage.setItem(mineKey(state.id), keep);
    render();
    return true;
  };
  const runIt = () => {
    // A lesson's poll: the lesson runs its own step (to its target, not the lab's end) and
    // marks the answer once the run shows it.
    if (lessonRunIt(state?.lesson)) return;
    client.send({ type: 'poll_close' });
    // The page's own play button: the run goes at the speed the teacher chose.
    if (store.get('state') !== 'playing') document.querySelector('#controls [data-act=play]')?.click();
  };
  const footer = (runs) => {
    const foot = el('div', 'poll-foot');
    const act = (key, fn) => { const b = el('button', key === 'poll.run_it' ? 'primary' : '', t(key)); b.type = 'button'; b.dataset.act = key; b.onclick = fn; foot.append(b); };
    if (runs) act('poll.run_it', runIt);
    return { foot, act };
  };

  const teacherView = () => {
    panel.append(state.metric ? histogram(state) : choiceBars(state, (i) => client.send({ type: 'poll_close', answer: i })));
    const { foot, act } = footer(state.open);
    foot.prepend(el('span', 'poll-voters', t('poll.voters', { n: state.voters })));
    if (state.open) act('poll.close', () => client.send({ type: 'poll_close' }));
    act('poll.hide', () => { hidden = state.id; render(); });
    panel.append(foot);
    if (!state.metric && !state.open && state.answer == null) panel.append(el('p', 'poll-hint', t(lessonRevealPending(state.lesson) ? 'poll.answer_after_run' : 'poll.mark_hint')));
    if (state.metric && state.truth === undefined) panel.append(el('p', 'poll-hint', t('poll.waiting_truth', { step: state.step })));
  };

  /** The number field of a numeric poll (a student's, or a learner's alone). */
  const guessForm = (mine) => {
    const row = el('form', 'poll-guess');
    const input = el('input');
    Object.assign(input, { type: 'number', step: 'any', inputMode: 'decimal', required: true, value: draft ?? mine ?? '' });
    input.oninput = () => { draft = input.value; };
    input.setAttribute('aria-label', t('poll.guess'));
    const send = el('button', alone() ? '' : 'primary', t('poll.send_guess'));
    send.disabled = input.disabled = !state.open;
    row.append(input, send);
    row.onsubmit = (e) => {
      e.preventDefault();
      const value = Number(input.value);
      if (input.value.trim() !== '' && Number.isFinite(value)) vote({ value }, String(value));
    };
    return row;
  };
  /** The choices as buttons, the voter's own pressed; once closed, the answer marked. */
  const choiceButtons = (mine, marks) => {
    const list = el('div', 'poll-choices');
    state.choices.forEach((c, i) => {
      const b = el('button', 'poll-choice', c);
      b.type = 'button';
      b.dataset.choice = String(i);
      b.disabled = !state.open;
      b.setAttribute('aria-pressed', String(mine === String(i)));
      if (marks && state.answer === i) { b.dataset.correct = '1'; b.append(el('span', 'poll-tag ok', `✓ ${t('poll.correct')}`)); }
      if (marks && mine === String(i)) b.append(el('span', 'poll-tag', t('poll.your_pick')));
      b.onclick = () => vote({ choice: i }, String(i));
      list.append(b);
    });
    return list;
  };

  // Closed, on a student's screen: one line ("you picked X · answer Y"), the class's bars
  // behind a tap, so the picture being run stays on a phone's first screen.
  const closedLine = (mine) => {
    const box = el('details', 'poll-sum');
    const parts = [];
    if (state.metric) {
      parts.push(mine !== null ? t('poll.your_guess', { value: mine }) : t('poll.sum_none'));
      parts.push(state.truth !== undefined && state.truth !== null ? t('poll.sum_truth', { value: fmt(state.truth), step: state.step }) : t('poll.sum_wait'));
    } else {
      parts.push(mine !== null ? t('poll.sum_mine', { mine: state.choices[Number(mine)] }) : t('poll.sum_none'));
      parts.push(state.answer != null ? t('poll.sum_answer', { answer: state.choices[state.answer] }) : t('poll.sum_wait'));
      if (state.answer != null && mine !== null) box.dataset.right = String(Number(mine) === state.answer);
    }
    const sum = el('summary', 'poll-sum-line');
    sum.append(el('span', 'poll-sum-text', parts.join(' · ')));
    box.append(sum, el('p', 'poll-q', state.question));
    box.append(state.metric ? histogram(state) : choiceBars(state, null, mine));
    return box;
  };

  const studentView = () => {
    const mine = localStorage.getItem(mineKey(state.id));
    if (!state.open) {
      panel.dataset.folded = '1';
      panel.replaceChildren(closedLine(mine));
      return;
    }
    if (state.metric) {
      panel.append(guessForm(mine));
      if (mine !== null) panel.append(el('p', 'poll-hint', t('poll.your_guess', { value: mine })));
      if (!state.open) panel.append(histogram(state));
      return;
    }
    panel.append(choiceButtons(mine, false));
    if (state.open) panel.append(el('p', 'poll-hint', t('poll.your_vote')));
    else panel.append(choiceBars(state, null, mine));
  };

  // Alone: no bars of nobody. Their own pick, "Run it", then their pick beside the answer.
  const aloneView = () => {
    const mine = localStorage.getItem(mineKey(state.id));
    if (state.metric) panel.append(guessForm(mine));
    else panel.append(choiceButtons(mine, !state.open));
    const { foot, act } = footer(false);
    if (state.open) {
      act('poll.run_it', () => {
        // A guess typed but not sent goes in before voting closes (the socket keeps order).
        const v = Number(draft);
        if (state.metric && draft !== null && draft.trim() !== '' && Number.isFinite(v)) vote({ value: v }, String(v));
        runIt();
      });
      foot.append(el('span', 'poll-hint', t(state.metric ? 'poll.alone_hint_numeric' : 'poll.alone_hint')));
    }
    const out = el('div', 'poll-result');
    if (state.metric) {
      if (mine !== null) out.append(el('p', 'poll-mine', t('poll.your_guess', { value: mine })));
      if (state.truth !== undefined) {
        out.append(el('p', 'poll-truth-text', t('poll.truth', { value: fmt(state.truth), step: state.step })));
        if (mine !== null && typeof state.truth === 'number') out.append(el('p', 'poll-verdict', t('poll.alone_off', { mine, diff: fmt(Math.abs(Number(mine) - state.truth)) })));
      } else if (!state.open) out.append(el('p', 'poll-hint', t('poll.waiting_truth', { step: state.step })));
    } else if (!state.open) {
      const pick = mine === null ? null : state.choices[Number(mine)];
      const answer = state.answer === undefined || state.answer === null ? null : state.choices[state.answer];
      const key = answer === null ? (pick === null ? null : 'poll.alone_no_answer') : pick === null ? 'poll.alone_skipped' : pick === answer ? 'poll.alone_right' : 'poll.alone_wrong';
      if (key) {
        const p = el('p', 'poll-verdict', t(key, { mine: pick, answer }));
        if (answer !== null) p.dataset.right = String(pick === answer);
        out.append(p);
      }
    }
    if (out.childElementCount) panel.append(out);
    if (!state.open) act('poll.hide', () => { hidden = state.id; render(); });
    panel.append(foot);
  };

  // A lesson step's poll in this page's language (the teacher's page asked in theirs).
  let raw = null;
  const localized = (m) => {
    const l = m.lesson && lessonPoll(m.lesson.id, m.lesson.step);
    if (!l) return m;
    const same = m.choices.length ? l.choices?.length === m.choices.length : !l.choices;
    return same ? { ...m, question: l.question, choices: m.choices.length ? l.choices : m.choices } : m;
  };
  client.on('poll_state', (m) => {
    if (m.id !== state?.id) draft = null;
    raw = m;
    state = localized(m);
    render();
    window.dispatchEvent(new CustomEvent('shaomai:poll', { detail: m })); // lesson.js folds its text
  });
  window.addEventListener('shaomai:lesson', () => { if (raw) { state = localized(raw); render(); } });
  client.on('ready', () => { state = raw = null; render(); }); // a new session: its poll (if any) follows
  store.on('role', render);
  store.on('readOnly', render);
  store.on('shareCode', render); // shared: the teacher's view of the class's bars
  lang.on('lang', render);
  return { relabel: render };
}

/** The class's counts per choice as horizontal bars; the marked answer in green. */
function choiceBars(s, onMark, mine = null) {
  const max = Math.max(1, ...s.counts);
  const box = el('ol', 'poll-bars');
  s.choices.forEach((c, i) => {
    const li = el('li', 'poll-bar');
    li.dataset.choice = String(i);
    if (s.answer === i) li.dataset.correct = '1';
    if (mine === String(i)) li.dataset.mine = '1';
    const label = el(onMark && !s.open ? 'button' : 'span', 'poll-label', c);
    if (onMark && !s.open) { label.type = 'button'; label.onclick = () => onMark(i); label.title = t('poll.correct'); }
    const track = el('span', 'poll-track');
    const fill = el('span', 'poll-fill');
    fill.style.width = `${(100 * s.counts[i]) / max}%`;
    track.append(fill);
    const n = el('b', 'poll-count', String(s.counts[i]));
    li.append(label, track, n);
    if (s.answer === i) li.append(el('span', 'poll-mark', `✓ ${t('poll.correct')}`));
    box.append(li);
  });
  return box;
}

/** Guesses per bin (the server's bins) as columns, the run's true value as a red line. */
function histogram(s) {
  const box = el('div', 'poll-hist');
  const cols = el('div', 'poll-cols');
  const max = Math.max(1, ...s.counts);
  (s.counts || []).forEach((n, i) => {
    const c = el('div', 'poll-col');
    c.title = `${fmt(s.edges[i])} – ${fmt(s.edges[i + 1])}: ${n}`;
    const fill = el('span', 'poll-fill');
    fill.style.height = `${(100 * n) / max}%`;
    c.append(el('b', 'poll-count', n ? String(n) : ''), fill);
    cols.append(c);
  });
  box.append(cols);
  const edges = s.edges || [];
  if (edges.length) {
    const axis = el('div', 'poll-axis');
    axis.append(el('span', '', fmt(edges[0])), el('span', '', fmt(edges[edges.length - 1])));
    box.append(axis);
  }
  if (s.truth !== undefined) {
    const lo = edges[0];
    const hi = edges[edges.length - 1];
    if (typeof s.truth === 'number' && edges.length && hi > lo) {
      const line = el('span', 'poll-truth');
      line.style.left = `${(100 * (s.truth - lo)) / (hi - lo)}%`;
      cols.append(line);
    }
    box.append(el('p', 'poll-truth-text', t('poll.truth', { value: fmt(s.truth), step: s.step })));
  }
  return box;
}

/** The teacher's form: a question with 2–6 choices, or a value of a metric at a step. */
function askForm(client, store, done) {
  const f = el('form', 'poll-form');
  f.innerHTML = `<label class="pf-q"><span></span><input name="question" maxlength="200" required></label>
    <fieldset class="pf-kind"><label><input type="radio" name="kind" value="choices" checked> <span></span></label>
    <label><input type="radio" name="kind" value="numeric"> <span></span></label></fieldset>
    <div class="pf-choices">${[1, 2, 3, 4].map(() => '<input name="choice" maxlength="80">').join('')}</div>
    <div class="pf-numeric" hidden><label><span></span> <select name="metric"></select></label>
    <label><span></span> <input name="step" type="number" min="1" value="100"></label></div>
    <div class="pf-act"><button class="primary" type="submit"></button> <button type="button" class="pf-cancel"></button></div>`;
  const kind = () => f.querySelector('[name=kind]:checked').value;
  f.querySelectorAll('[name=kind]').forEach((r) => { r.onchange = () => { f.querySelector('.pf-choices').hidden = kind() !== 'choices'; f.querySelector('.pf-numeric').hidden = kind() !== 'numeric'; f.question.required = kind() === 'choices'; }; });
  f.querySelector('.pf-cancel').onclick = done;
  // The scalars the lab streams are the metrics a class can predict.
  const metrics = new Set();
  const addMetrics = (m) => {
    const before = metrics.size;
    for (const r of m.rows || []) for (const k of Object.keys(r.values)) metrics.add(k);
    if (metrics.size === before) return;
    const sel = f.querySelector('[name=metric]');
    const keep = sel.value;
    sel.replaceChildren(...[...metrics].map((k) => Object.assign(el('option', '', k), { value: k })));
    sel.value = metrics.has(keep) ? keep : metrics.has('loss') ? 'loss' : sel.options[0].value;
  };
  client.on('scalars', addMetrics);
  client.on('history', addMetrics);
  f.onsubmit = (e) => {
    e.preventDefault();
    const question = f.question.value.trim();
    if (kind() === 'numeric') {
      const metric = f.metric.value;
      const step = Math.round(Number(f.step.value));
      client.send({ type: 'poll', question: question || t('poll.numeric_q', { metric, step }), numeric: { metric, step } });
    } else {
      const choices = [...f.querySelectorAll('[name=choice]')].map((i) => i.value.trim()).filter(Boolean);
      client.send({ type: 'poll', question, choices });
    }
    done();
  };
  f.relabel = () => {
    const spans = f.querySelectorAll('label > span');
    [t('poll.question'), t('poll.kind_choices'), t('poll.kind_numeric'), t('poll.metric'), t('poll.at_step')].forEach((s, i) => { spans[i].textContent = s; });
    f.querySelectorAll('[name=choice]').forEach((inp, i) => { inp.placeholder = t('poll.choice_n', { n: i + 1 }); });
    f.querySelector('[type=submit]').textContent = t('poll.send');
    f.querySelector('.pf-cancel').textContent = t('poll.cancel');
    f.question.required = kind() === 'choices';
  };
  return f;
}
