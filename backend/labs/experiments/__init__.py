"""'Try this next': two or three experiments for every lab, served with the lab's info.

Each is {key, params (a partial params dict: the page sends it as a `set`, so the server
validates it as any form change), label and watch (what to look at), both in en and zh}.
The experiments come from what docs/CURRICULUM says each lab must show. The four labs whose
view draws its own `tryBar` (depth, norms, positions, rnn) reuse those scenarios' params here,
and the page's tryNext row stays hidden there (docs/try-next.md).

The table is kept by chapter, a module each (one idea per file, under ~400 lines).
"""

from __future__ import annotations

from backend.labs.experiments import (
    after_the_transformer,
    deep_networks,
    learning_and_neurons,
    sequences_and_attention,
)

EXPERIMENTS: dict[str, list[dict]] = {
    **learning_and_neurons.EXPERIMENTS,
    **deep_networks.EXPERIMENTS,
    **sequences_and_attention.EXPERIMENTS,
    **after_the_transformer.EXPERIMENTS,
}


def experiments_for(lab_id: str) -> list[dict]:
    return EXPERIMENTS.get(lab_id, [])
