"""Imported last by the session processes' fork server (backend/session_process.py): torch's
one-time costs (backend/warm_torch.py) paid there, once, so that no forked session pays
them. Without it each session's first optimizer imported torch._dynamo in its own process:
1.2–4 s before its first step, a process-mode session's whole extra time to open."""

from __future__ import annotations

import torch

from backend.warm_torch import warm_torch

torch.set_num_threads(1)  # as the children run (backend/worker.py): no intra-op pool to fork
warm_torch()
