// What the page says when something is refused or lost, as sentences in the page's language
// that name the control: a link's bad value, a refused param, a run the server no longer has.
import { addStrings, currentLang, has, pick, t } from './i18n.js';
import { bounds } from './url.js';

addStrings({
  en: {
    'note.link_refused': 'The link’s “{field}” = {value} was not used: {why}. The lab uses {fallback} instead.',
    'note.why_number': 'it is not a number',
    'note.why_integer': 'it must be a whole number',
    'note.why_range': 'it must be between {lo} and {hi}',
    'note.why_choice': 'it must be one of {choices}',
    'note.why_bool': 'it must be on or off',
    'note.why_format': 'it could not be read',
    'note.why_length': 'it is longer than {max} characters',
    'note.why_lab': 'the lab cannot run with it',
    'note.open_all_refused': 'The link’s settings do not work together ({why}), so the lab opened with its defaults.',
    'note.param_refused': '“{field}” cannot be {value}: {why}. It stays as it was.',
    'note.param_refused_plain': '“{field}” was refused: {why}.',
    'note.refused': '{what} was refused.',
    'note.server_restarting': 'The server is restarting. This page reconnects by itself.',
    'note.run_lost': 'The server restarted or stopped (or this run expired): the run at step {step} is gone. A new run starts at step 0.',
    'note.restore': 'Restore the last saved state (step {step})',
    'note.restore_auto': 'Restore the last autosave (step {step}, {ago})',
    'note.continue': 'Continue your run from step {step}',
    'note.continue_text': 'This browser has a run of this lab at step {step} ({ago}).',
    'note.dismiss': 'Start over',
    'note.ago_min': '{n} min ago',
    'note.ago_now': 'just now',
    'note.in_class': 'In class {code}',
    'note.leave_class': 'Leave the class',
    'note.too_many_bytes': 'Too long: {n} bytes, the limit is {max} bytes ({kb} KB). Cut it shorter; nothing was sent.',
    'note.byte_count': '{n} of {max} bytes',
    'note.wait_for_text': 'Paste your text here (at least {min} characters): training starts when it is in.',
    state_shutting_down: 'Server restarting',
    step_n: 'step {step}',
    steps_per_s_now: '{n} steps/s',
  },
  zh: {
    'note.link_refused': '链接里的“{field}” = {value} 没有采用：{why}。本实验改用 {fallback}。',
    'note.why_number': '它不是数字',
    'note.why_integer': '它必须是整数',
    'note.why_range': '它必须在 {lo} 到 {hi} 之间',
    'note.why_choice': '它必须是 {choices} 之一',
    'note.why_bool': '它只能是开或关',
    'note.why_format': '无法读取它',
    'note.why_length': '它超过了 {max} 个字符',
    'note.why_lab': '本实验不能用这个值运行',
    'note.open_all_refused': '链接里的设置不能同时成立（{why}），所以本实验用默认设置打开。',
    'note.param_refused': '“{field}”不能是 {value}：{why}。它保持原值。',
    'note.param_refused_plain': '“{field}”被拒绝：{why}。',
    'note.refused': '{what}被拒绝。',
    'note.server_restarting': '服务器正在重启，本页面会自动重新连接。',
    'note.run_lost': '服务器重启或停止了（或本次训练已过期）：第 {step} 步的训练没有了。新的训练从第 0 步开始。',
    'note.restore': '恢复最近一次保存的状态（第 {step} 步）',
    'note.restore_auto': '恢复最近一次自动保存（第 {step} 步，{ago}）',
    'note.continue': '从第 {step} 步继续你的训练',
    'note.continue_text': '这个浏览器里有本实验的一次训练，在第 {step} 步（{ago}）。',
    'note.dismiss': '重新开始',
    'note.ago_min': '{n} 分钟前',
    'note.ago_now': '刚才',
    'note.in_class': '在课堂 {code} 中',
    'note.leave_class': '离开课堂',
    'note.too_many_bytes': '太长了：{n} 字节，上限是 {max} 字节（{kb} KB）。请删短一些；什么都没有发送。',
    'note.byte_count': '{n} / {max} 字节',
    'note.wait_for_text': '请在这里粘贴你的文字（至少 {min} 个字符）：粘贴后开始训练。',
    state_shutting_down: '服务器正在重启',
    step_n: '第 {step} 步',
    steps_per_s_now: '每秒 {n} 步',
  },
});

const num = (v) => (typeof v === 'number' ? String(Number(v.toPrecision(4))) : String(v));
const quote = (v) => `“${String(v).length > 40 ? `${String(v).slice(0, 40)}…` : v}”`;

/** A param's label in the page's language (its name when it has none). */
export const labelOf = (schema, field) => pick(schema?.properties?.[field]?.label) || field;

/** Why a value of this param is refused, as the end of a sentence. */
export function why(reason, prop = {}) {
  if (reason === 'range') {
    const { lo, hi } = bounds(prop);
    return t('note.why_range', { lo: num(lo ?? '−∞'), hi: num(hi ?? '∞') });
  }
  if (reason === 'choice') return t('note.why_choice', { choices: (prop.enum || []).map((v) => pick(prop.choices?.[v]) || v).join(' / ') });
  if (reason === 'length') return t('note.why_length', { max: prop.maxLength });
  return t(`note.why_${reason}`);
}

/** The sentence for a link value the page did not use ({field, text, reason}). */
export function linkRefused(schema, ref) {
  const prop = schema?.properties?.[ref.field] || {};
  const d = prop.default;
  const fallback = prop.enum ? pick(prop.choices?.[d]) || d : num(d);
  return t('note.link_refused', { field: labelOf(schema, ref.field), value: quote(ref.text), why: why(ref.reason, prop), fallback });
}

/** Why the server refused a value (its own keyed sentence, else the schema's bounds). */
/** A refusal's values for its sentence: the field as its label, whole numbers with the
 * page language's separators (210,000). */
function refusalValues(m, schema) {
  const values = { ...(m.values || {}) };
  if (values.field) values.field = labelOf(schema, values.field);
  for (const [k, v] of Object.entries(values)) {
    if (Number.isInteger(v) && Math.abs(v) >= 1000) values[k] = v.toLocaleString(currentLang() === 'zh' ? 'zh-CN' : 'en-US');
  }
  return values;
}

export function serverWhy(m, schema) {
  const values = refusalValues(m, schema);
  if (m.key && has(m.key)) return t(m.key, values);
  const prop = schema?.properties?.[m.field];
  if (prop && (prop.minimum !== undefined || prop.maximum !== undefined)) return why('range', prop);
  if (prop?.enum) return why('choice', prop);
  return t('note.why_lab');
}

/** Any server refusal as a sentence naming the control (the param's label, or the action). */
export function errorSentence(m, schema, sent) {
  const field = m.field && schema?.properties?.[m.field] ? m.field : m.values?.field;
  if (m.code === 'invalid_params' || (m.code === 'too_large' && field)) {
    if (field && sent && field in sent) return t('note.param_refused', { field: labelOf(schema, field), value: quote(sent[field]), why: serverWhy(m, schema) });
    if (field) return t('note.param_refused_plain', { field: labelOf(schema, field), why: serverWhy(m, schema) });
  }
  if (m.key && has(m.key)) return t(m.key, refusalValues(m, schema));
  return t('note.refused', { what: t(`err_${m.code}`) });
}

/** "3 min ago" / "just now". */
export function ago(at) {
  const n = Math.round((Date.now() - at) / 60000);
  return n < 1 ? t('note.ago_now') : t('note.ago_min', { n });
}

/** A notice line with buttons: [{label, onClick}]; the line goes when one is pressed. */
export function notice(el, text, buttons = [], kind = 'info') {
  el.replaceChildren();
  el.hidden = !text;
  el.dataset.kind = kind;
  if (!text) return;
  const p = document.createElement('span');
  p.textContent = text;
  el.append(p);
  for (const { label, onClick, act } of buttons) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    if (act) b.dataset.act = act;
    b.onclick = () => { el.hidden = true; onClick(); };
    el.append(b);
  }
}

/** UTF-8 bytes of a string (what the websocket carries). */
export const bytesOf = (s) => new TextEncoder().encode(s).length;

/**
 * A short message (a refusal, "params reset"): a line in the dock under the controls, in the
 * page's flow, so it never covers a value; gone after a few seconds (a little longer for
 * longer text) or on a tap.
 */
export function toast(text) {
  const el = document.getElementById('toast');
  const dock = document.querySelector('.dock');
  if (dock && el.parentElement !== dock) dock.insertBefore(el, dock.querySelector('.timeline-row'));
  el.textContent = text;
  el.hidden = false;
  el.onclick = () => { el.hidden = true; };
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, Math.min(6000, 3000 + 25 * text.length));
}

/** A line in the notes above the picture (a link value not used, a refused param...). */
export function note(text, id) {
  const box = document.querySelector('#notes');
  let p = id && box.querySelector(`[data-note="${id}"]`);
  if (!p) { p = document.createElement('p'); if (id) p.dataset.note = id; box.append(p); }
  p.textContent = text;
}

/** The page's banner line (an unknown lab, a lost connection); empty text hides it. */
export function banner(text, kind = 'info') {
  const el = document.querySelector('#banner');
  el.hidden = !text;
  el.textContent = text || '';
  el.dataset.kind = kind;
}
