// The keyboard help: `?` opens a list of the page's real shortcuts (presenter.js's play,
// step and timeline keys, lesson.js's clicker keys, the enlarged map's Escape); Escape or
// the × closes it. Mounted once by the shell. The keys are the ones those modules handle:
// change them there and here together.
import { ensureCss } from '../core/css.js';
import { addStrings, lang, t } from '../core/i18n.js';

addStrings({
  en: {
    'keys.title': 'Keyboard shortcuts',
    'keys.close': 'Close the keyboard help',
    'keys.play': 'Play or pause the training (the driver)',
    'keys.step': 'One training step; while looking back, the next recorded step',
    'keys.back': 'Back one step on the timeline',
    'keys.scrub': 'Move the timeline one step',
    'keys.lesson': 'In a lesson: next or previous lesson step (the clicker)',
    'keys.present': 'Presenter mode on or off (large type for a projector)',
    'keys.blank': 'Blank the screen; Esc shows it again',
    'keys.escape': 'Close an enlarged map or this help',
    'keys.help': 'Show this help',
    'keys.or': 'or',
    'keys.note': 'Keys do nothing while you type in a box.',
  },
  zh: {
    'keys.title': '键盘快捷键',
    'keys.close': '关闭快捷键说明',
    'keys.play': '开始或暂停训练（主控者）',
    'keys.step': '训练一步；回看历史时，跳到下一个记录的步',
    'keys.back': '时间轴后退一步',
    'keys.scrub': '时间轴移动一步',
    'keys.lesson': '课程中：下一步或上一步（翻页笔）',
    'keys.present': '打开或关闭演示模式（投影用的大字）',
    'keys.blank': '黑屏；按 Esc 恢复',
    'keys.escape': '关闭放大的图或本说明',
    'keys.help': '显示本说明',
    'keys.or': '或',
    'keys.note': '在输入框里打字时，快捷键不起作用。',
  },
});

// [keys (each a list of key caps joined by "+"), what they do]
const SHORTCUTS = [
  [['Space', '.'], 'keys.play'],
  [['→', 'PageDown'], 'keys.step'],
  [['←', 'PageUp'], 'keys.back'],
  [['Shift+←', 'Shift+→'], 'keys.scrub'],
  [['PageDown', 'PageUp'], 'keys.lesson'],
  [['P'], 'keys.present'],
  [['B'], 'keys.blank'],
  [['Esc'], 'keys.escape'],
  [['?'], 'keys.help'],
];

export function shortcutHelp() {
  ensureCss('/css/learner-tools.css');
  const dlg = document.createElement('dialog');
  dlg.className = 'shortcut-help';
  dlg.id = 'shortcut-help';
  document.body.append(dlg);

  function render() {
    const head = document.createElement('div');
    head.className = 'sh-head';
    const h = document.createElement('h2');
    h.id = 'shortcut-help-title';
    h.textContent = t('keys.title');
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'sh-close';
    close.textContent = '×';
    close.setAttribute('aria-label', t('keys.close'));
    close.onclick = () => dlg.close();
    head.append(h, close);
    const table = document.createElement('table');
    for (const [keys, what] of SHORTCUTS) {
      const tr = document.createElement('tr');
      const k = document.createElement('td');
      keys.forEach((combo, i) => {
        if (i) k.append(` ${t('keys.or')} `);
        combo.split('+').forEach((cap, j) => {
          if (j) k.append('+');
          const kbd = document.createElement('kbd');
          kbd.textContent = cap;
          k.append(kbd);
        });
      });
      const d = document.createElement('td');
      d.textContent = t(what);
      tr.append(k, d);
      table.append(tr);
    }
    const note = document.createElement('p');
    note.textContent = t('keys.note');
    dlg.setAttribute('aria-labelledby', h.id);
    dlg.replaceChildren(head, table, note);
  }
  render();
  lang.on('lang', render);

  document.addEventListener('keydown', (e) => {
    if (e.key !== '?' || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest?.('input, textarea, select, [contenteditable]')) return;
    e.preventDefault();
    if (dlg.open) dlg.close();
    else dlg.showModal(); // Escape closes a modal dialog by itself
  });
  return { el: dlg, open: () => dlg.showModal(), close: () => dlg.close() };
}
