// The step the page shows from the past (the timeline scrubbed back to a recorded frame), or
// null while it shows the live run. The shell sets it from the frame it drew; history charts
// draw a cursor there and "now" panels say which past step they show instead.
import { createStore } from '../core/store.js';

const state = createStore({ step: null });

export const viewing = {
  /** The past step shown, or null (live). */
  get: () => state.get('step'),
  set: (step) => state.set('step', step ?? null),
  /** fn(step | null) on every change; returns the unsubscribe. */
  on: (fn) => state.on('step', fn),
};
