#!/usr/bin/env bash
# The bench's CUDA figures on a lent GPU machine, in one call of the device tool:
#   tools/device_wheels.sh            (here, once: the web stack's wheels into .whl/)
#   run(command="bash bench/gpu_device.sh", carry=[".whl"], timeout_s=540)
# Its image has Python 3.12 with a CUDA torch but no FastAPI, uvicorn or pydantic: the
# wheels go into /tmp/site, named on PYTHONPATH (bench/server.py passes it on to the server
# and the clients). Runs scenarios `gpu` (a 10.7M GPT live) and `overhead` (the default
# `gpt` beside its bare loop, on CUDA); the table and latest.json come back under $OUT.
set -uo pipefail
out=${OUT:-/tmp/shaomai-gpu}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 SHAOMAI_DEVICE=auto
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA'; print(torch.__version__, torch.cuda.get_device_name(0))" || exit 1
timeout 480 python3 -m bench --only gpu,overhead ${QUICK:+--quick} 2>&1 | tee "$out/bench.log"
rc=${PIPESTATUS[0]}
cp bench/results/latest.json "$out/" 2>/dev/null
cp bench/results/*.log "$out/" 2>/dev/null
exit "$rc"
