// What each attention head does, measured on the frame's own patterns (never assumed): over
// the graded (answer) rows, the share of a head's weight on the key holding the symbol the
// row must write next, and the query−key offset that holds most of its weight. The task
// explanations say what would solve a task; this says what the trained model does.

/**
 * patterns: per layer a decoded [.., H, T, T] tensor; tokens, targets: per position;
 * graded: per position, whether it is an answer row. Returns per head
 * {layer, head, answer, offset, offsetShare} (shares of the head's weight on those rows).
 */
export function measureHeads(patterns, { tokens, targets, graded }) {
  const out = [];
  const rows = graded.map((g, i) => (g ? i : -1)).filter((i) => i >= 0);
  patterns.forEach((p, layer) => {
    if (!p) return;
    const T = p.shape[p.shape.length - 1];
    const H = p.shape[p.shape.length - 3];
    for (let head = 0; head < H; head++) {
      const byOffset = new Float64Array(T);
      let total = 0, answer = 0;
      for (const i of rows) {
        const base = (head * T + i) * T;
        for (let j = 0; j <= i && j < T; j++) {
          const w = p.data[base + j];
          total += w;
          byOffset[i - j] += w;
          if (tokens[j] === targets[i]) answer += w;
        }
      }
      if (!(total > 0)) continue;
      let offset = 0;
      for (let d = 1; d < T; d++) if (byOffset[d] > byOffset[offset]) offset = d;
      out.push({ layer, head, answer: answer / total, offset, offsetShare: byOffset[offset] / total });
    }
  });
  return out;
}

/** The heads worth naming (a share ≥ min), strongest first, at most `n`. */
export function strongHeads(measured, min = 0.4, n = 4) {
  return measured
    .map((m) => ({ ...m, best: Math.max(m.answer, m.offsetShare), kind: m.answer >= m.offsetShare ? 'answer' : 'offset' }))
    .filter((m) => m.best >= min)
    .sort((a, b) => b.best - a.best)
    .slice(0, n);
}
