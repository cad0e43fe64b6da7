"""The test suite. Set here, before any test module imports torch (libgomp reads it once):
OpenMP threads that wait sleep instead of spinning. A trained outcome runs with 2 torch
threads too (tests/trained.py); on a machine whose cores are busy with another job, a
spinning thread starved the one it waited for and a tiny training step took ~30 times
longer."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
