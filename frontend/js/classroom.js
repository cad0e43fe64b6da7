// The class: share a join code with a QR, follow the teacher's view, fork, save, export.
import { t } from './core/i18n.js';
import { notice } from './core/notices.js';
import { labViewKeys, LEGACY_VIEW_KEYS, storeKey } from './core/url.js';
import { classBandwidth } from './classBandwidth.js';

// The view state a class follows: the lab's declared view keys (its catalog entry's
// `view_keys`) plus the generic ones. Store key -> wire name (the hovered token is the
// store's `hoverToken`, `hover` on the wire, -1 for none).
const GENERIC = ['present', 'blank', 'hover', 'low']; // `scrub` follows the scrubber, below; `low`: classBandwidth.js
// A restore after a server restart proves with the lost session's driver token that this
// page drove it, so the class code comes back; the token waits in this tab, not the URL.
const restoreKey = (run) => `shaomai:restore:${run}`;
export function keepRestoreToken(run, token) { if (token) sessionStorage.setItem(restoreKey(run), token); }
export function restoreToken(run) {
  const token = sessionStorage.getItem(restoreKey(run));
  sessionStorage.removeItem(restoreKey(run));
  return token ? { token } : {};
}

const wireNames = (viewKeys) => Object.fromEntries([...Object.keys(labViewKeys(viewKeys || LEGACY_VIEW_KEYS)), ...GENERIC].map((k) => [storeKey(k), k]));

function button(key, onClick, cls = '') {
  const b = document.createElement('button');
  b.type = 'button';
  b.dataset.i18n = key;
  b.dataset.act = key;
  b.className = cls;
  b.textContent = t(key);
  b.onclick = onClick;
  return b;
}

export function classroom(root, { client, store, scrub, toast, labId, viewKeys = null }) {
  const VIEW_KEYS = wireNames(viewKeys);
  root.classList.add('class-tools');
  const share = button('share_class', () => client.send({ type: 'share' }));
  const fork = button('fork', () => client.send({ type: 'fork' }));
  const save = button('save_run', () => client.send({ type: 'save', name: '' }));
  // Export downloads the live session as a file; it saves nothing (Save does).
  const exportBtn = button('export_json', () => { location.assign(`/api/runs/live/${encodeURIComponent(client.session)}/export.json`); });
  const count = document.createElement('span');
  count.className = 'connections';
  count.setAttribute('aria-live', 'polite');
  // A student in a class: the code, and leaving is a deliberate act (a reload stays in).
  const inClass = document.createElement('span');
  inClass.className = 'class-note';
  const leave = button('note.leave_class', () => {
    const u = new URL(location.href);
    for (const k of ['join', 'step', 'scrub']) u.searchParams.delete(k);
    sessionStorage.removeItem(`shaomai:${labId}`);
    location.assign(u);
  });
  root.append(share, fork, save, exportBtn, count, inClass, leave);

  // The share overlay: the code, large, with its QR and link, for the projector.
  const overlay = document.createElement('div');
  overlay.className = 'share-overlay';
  overlay.hidden = true;
  overlay.setAttribute('role', 'dialog');
  overlay.innerHTML = `<div class="share-card"><h2 data-i18n="join_title"></h2>
    <p class="code"></p><img alt="" class="qr"><p class="link"></p><p class="hint" data-i18n="join_hint"></p>
    <p class="warn" hidden data-i18n="join_localhost"></p>
    <button type="button" class="close" data-i18n="close"></button></div>`;
  document.body.append(overlay);
  overlay.querySelector('.close').onclick = () => { overlay.hidden = true; share.focus(); };
  overlay.addEventListener('keydown', (e) => { if (e.key === 'Escape') overlay.querySelector('.close').click(); });
  // The class's bytes/s and the low-bandwidth switch: in the toolbar and on the share card.
  const band = classBandwidth([root, overlay.querySelector('.share-card .hint').parentElement], { client, store });

  client.on('shared', (m) => {
    const link = `${location.origin}${m.url}`;
    overlay.querySelector('.code').textContent = m.code.replace(/(...)(...)/, '$1 $2');
    overlay.querySelector('.qr').src = `/api/join/${m.code}/qr.svg`;
    overlay.querySelector('.qr').alt = t('qr_alt', { link });
    overlay.querySelector('.link').textContent = link;
    overlay.querySelector('.warn').hidden = !['localhost', '127.0.0.1', '[::1]'].includes(location.hostname);
    store.set('shareCode', m.code);
    if (store.get('wantShare')) { overlay.hidden = false; overlay.querySelector('.close').focus(); }
  });
  share.addEventListener('click', () => store.set('wantShare', true));
  client.on('saved', (m) => { toast(t('saved_as', { id: m.run })); });

  const renderRole = () => {
    const role = store.get('role');
    const readOnly = store.get('readOnly');
    share.hidden = role !== 'driver' || readOnly;
    save.hidden = role !== 'driver';
    exportBtn.hidden = role !== 'driver';
    fork.hidden = role === null;
    const n = store.get('connections') || 0;
    count.textContent = role === 'driver' && n > 1 ? t('n_connected', { n: n - 1 }) : '';
    const code = store.get('classCode');
    inClass.textContent = code ? t('note.in_class', { code: code.replace(/(...)(...)/, '$1 $2') }) : '';
    leave.hidden = !code;
    leave.textContent = t('note.leave_class');
  };
  store.on('role', renderRole);
  store.on('connections', renderRole);
  store.on('readOnly', renderRole);
  store.on('classCode', renderRole);

  // The driver's view state goes to the class, a few times a second at most.
  let pending = {};
  let timer = null;
  const flush = () => { timer = null; client.send({ type: 'view', state: pending }); pending = {}; };
  const applying = { now: false };
  store.on('*', (key, value) => {
    if (!(key in VIEW_KEYS) || store.get('role') !== 'driver' || applying.now) return;
    pending[VIEW_KEYS[key]] = value === null || value === undefined ? (key === 'hoverToken' ? -1 : value) : value;
    if (pending[VIEW_KEYS[key]] === undefined) delete pending[VIEW_KEYS[key]];
    if (!timer) timer = setTimeout(flush, 60);
  });
  // A driver's view state set before it was the driver (the link's ?present=1, layer,
  // head...): sent once it is, so a class joining later sees it too.
  store.on('role', (role) => {
    if (role !== 'driver') return;
    for (const [key, wire] of Object.entries(VIEW_KEYS)) {
      const v = store.get(key);
      if (v !== null && v !== undefined && key !== 'hoverToken') pending[wire] = v;
    }
    if (Object.keys(pending).length && !timer) timer = setTimeout(flush, 60);
  });
  // Viewers follow it.
  client.on('view', (m) => {
    if (store.get('role') === 'driver') return; // our own view, echoed to the class
    applying.now = true;
    for (const [key, wire] of Object.entries(VIEW_KEYS)) {
      if (wire in m.state) store.set(key, wire === 'hover' && m.state.hover === -1 ? null : m.state[wire]);
    }
    applying.now = false;
    if ('scrub' in m.state) {
      if (m.state.scrub >= 0) scrub.seekTo(m.state.scrub);
      else if (scrub.scrubbing) scrub.goLive();
    }
  });
  // A class away (the server restarted; the teacher has not restored it yet): say so and
  // ask again every few seconds. The server does not count these as wrong codes.
  let waiting = null;
  const waitForClass = (code) => {
    notice(document.querySelector('#notice'), t('note.class_away', { code: code.replace(/(...)(...)/, '$1 $2') }), [], 'warn');
    clearTimeout(waiting);
    // Asked of any replica; the class may come back on another one.
    waiting = setTimeout(() => client.joinClass(code), 3000);
  };
  client.on('ready', () => {
    if (waiting === null) return;
    waiting = null;
    notice(document.querySelector('#notice'), '');
  });
  return {
    relabel: () => { renderRole(); band.relabel(); },
    waitForClass,
    /** The driver scrubbed (step) or went back to live (-1). */
    scrubbed(step) {
      if (store.get('role') === 'driver') { pending.scrub = step; if (!timer) timer = setTimeout(flush, 60); }
    },
    labId,
  };
}
