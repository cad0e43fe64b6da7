// Which session a lab page starts with: a reload of the same URL rejoins its session, a
// `join` code joins a class, a `run` opens a saved run, else a new session opens. The
// driver's session is remembered for that reload, but not in an iframe: an article's embeds
// of one lab share the tab's sessionStorage, and each must open its own session (the later
// ones would otherwise drive the first one's).
import { restoreToken } from '../classroom.js';
import { lastRun, rememberRun } from './runs.js';

/** Sends the first message; returns remember() (after `ready`), this browser's earlier run of
 * the lab to offer (not forced; null), and the URL's join code. */
export function startSession(client, labId, store) {
  const urlKey = () => JSON.stringify([store.get('params'), store.get('seed')]);
  const framed = window.self !== window.top;
  const remember = () => { if (!framed) sessionStorage.setItem(`shaomai:${labId}`, JSON.stringify({ session: client.session, token: client.token, key: urlKey() })); };
  const saved = framed ? null : JSON.parse(sessionStorage.getItem(`shaomai:${labId}`) || 'null');
  const q = new URLSearchParams(location.search);
  // This browser's last run of this lab (another tab, a closed one): offered, not forced.
  const continuing = sessionStorage.getItem(`shaomai:continue:${labId}`) === '1';
  sessionStorage.removeItem(`shaomai:continue:${labId}`);
  const earlier = !continuing && !q.get('join') && !q.get('run') && !(saved && saved.key === urlKey()) ? lastRun(labId) : null;
  if (continuing && saved && !q.get('join')) client.join(saved.session, saved.token);
  else if (q.get('join')) client.start({ type: 'join', code: q.get('join') }); // a reload stays in the class
  else if (q.get('run')) client.start({ type: 'open', run: q.get('run'), mode: q.get('mode') === 'resume' ? 'resume' : 'replay', ...restoreToken(q.get('run')) });
  else if (saved && saved.key === urlKey()) client.join(saved.session, saved.token);
  else client.open(labId, store.get('params'), store.get('seed'));
  recordSteps(client, labId, store);
  return { remember, earlier, joinCode: q.get('join') };
}

const RECORD_EVERY_MS = 1000;

/** The driven run's step in this browser's runs as it moves, not only at `ready` and `status`
 * (a playing run sends neither): a tab closed while playing is offered at the step it reached
 * (the server pauses a run nobody watches). Written at most once a second, and as the page goes. */
function recordSteps(client, labId, store) {
  let due = null;
  const write = () => {
    clearTimeout(due);
    due = null;
    if (client.session && client.token) rememberRun(labId, { session: client.session, token: client.token, step: store.get('step') || 0 });
  };
  store.on('step', () => { if (due === null) due = setTimeout(write, RECORD_EVERY_MS); });
  addEventListener('pagehide', write);
}
