// This browser's runs of each lab (localStorage, so a closed tab's run is still known): the
// page offers "continue your run from step N" while the server may still hold the session.
const KEY = (lab) => `shaomai:runs:${lab}`;
const KEEP_MS = 6 * 3600 * 1000; // older records are dropped (the server forgets sooner)

const read = (lab) => {
  try {
    const runs = JSON.parse(localStorage.getItem(KEY(lab)) || '[]');
    return Array.isArray(runs) ? runs.filter((r) => r && r.session && Date.now() - r.at < KEEP_MS) : [];
  } catch { return []; }
};
const write = (lab, runs) => {
  try { localStorage.setItem(KEY(lab), JSON.stringify(runs.slice(0, 3))); } catch { /* private mode: nothing kept */ }
};

/** Note a driven session of this lab ({session, token, step}); written as it moves. */
export function rememberRun(lab, { session, token, step }) {
  if (!session || !token) return;
  const runs = read(lab).filter((r) => r.session !== session);
  write(lab, [{ session, token, step, at: Date.now() }, ...runs]);
}

/** The most recent run of this lab this browser drove past step 0, or null. */
export function lastRun(lab) {
  return read(lab).find((r) => r.step > 0) || null;
}

/** Forget one run (it ended, or the learner chose to start over). */
export function forgetRun(lab, session) {
  write(lab, read(lab).filter((r) => r.session !== session));
}

/** The newest run the server saved (by hand or autosave) from a lost session, or null
 * (docs/protocol.md). Right after a replica dies the proxy may answer 502 once or twice:
 * try again, as the socket's backoff does; a 204 (nothing saved) is an answer. */
export async function latestSaved(session) {
  for (const wait of [0, 500, 1000, 2000, 4000]) {
    if (wait) await new Promise((done) => setTimeout(done, wait));
    try {
      const r = await fetch(`/api/runs/latest?session=${encodeURIComponent(session)}`);
      if (r.status === 204) return null; // nothing saved from that session
      if (r.ok) return await r.json();
      if (r.status < 500) return null;
    } catch { /* the network: try again */ }
  }
  return null;
}
