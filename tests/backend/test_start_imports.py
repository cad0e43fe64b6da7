"""The server's start waits for importing the app and every lab: none of them may construct
an optimizer (or anything else) that imports torch._dynamo at import time (~1.7 s, twice
that on a busy 2-core machine); the background warm-up pays for it after /api/health
answers. (The optimizers lab read torch's defaults at import: start 1.6 s -> 4.5 s.)"""

import subprocess
import sys

from tests.conftest import ROOT

PROBE = (
    "import sys, backend.app, backend.labs; backend.labs.load_all(); "
    "print('torch._dynamo' in sys.modules)"
)


def test_importing_the_app_and_every_lab_leaves_torch_dynamo_alone():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False", out.stdout + out.stderr
