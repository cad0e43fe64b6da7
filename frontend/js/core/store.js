// A tiny pub/sub store: views share state (hovered token, selected head) through it.

export function createStore(initial = {}) {
  const state = { ...initial };
  const subs = new Map();
  return {
    get: (key) => state[key],
    set(key, value) {
      if (state[key] === value) return;
      state[key] = value;
      for (const fn of subs.get(key) || []) fn(value);
      for (const fn of subs.get('*') || []) fn(key, value);
    },
    on(key, fn) {
      if (!subs.has(key)) subs.set(key, new Set());
      subs.get(key).add(fn);
      return () => subs.get(key).delete(fn);
    },
  };
}
