#!/usr/bin/env bash
# Wheels for a lent GPU machine (docs/benchmarks.md, "The bench on a GPU"): its image has
# Python 3.12 with a CUDA torch, numpy, tokenizers, safetensors, jinja2, prometheus-client
# and the like, but not the web stack. This downloads what the server and the bench import
# beyond that, at the versions this venv runs, into .whl/ (ignored by git); the device call
# carries .whl and installs them with --no-index --no-deps into /tmp/site.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
# The names: the distributions a running server and the bench import here (python -X
# importtime) that the image's package list lacks; typing_extensions too, as pydantic needs
# a newer one (≥ 4.16) than an image may hold.
NAMES="fastapi starlette pydantic pydantic_core pydantic-settings annotated-types
typing-inspection typing_extensions opentelemetry-api uvicorn httptools websockets
python-dotenv plotly segno SQLAlchemy"
specs=()
for n in $NAMES; do
  specs+=("$n==$(.venv/bin/python -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$n")")
done
rm -rf .whl
.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  --platform any -d .whl "${specs[@]}"
du -sh .whl
