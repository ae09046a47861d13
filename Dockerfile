# syntax=docker/dockerfile:1

# Orion container for Cloud Run. Two stages: the builder resolves the locked dependencies
# with uv; the runtime stage receives only the finished virtualenv, so neither uv nor pip's
# caches ship in the image.

FROM python:3.11.14-slim-bookworm AS builder

# uv from PyPI, pinned to the version the lock file was produced with.
RUN pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore uv==0.13.9

# UV_COMPILE_BYTECODE: compile .pyc at build time; importing the stack takes seconds and Slack
#   retries any event not acknowledged within 3 s, so cold start must not also compile.
# UV_LINK_MODE=copy: the cache is a separate mount, so hard links would fail (with a warning).
# UV_PYTHON_DOWNLOADS=never: build the venv on this image's interpreter, the one the runtime
#   stage has at the same path, never on a downloaded Python that would not be copied.
# UV_NO_EDITABLE: install the project itself as a wheel into site-packages (compiled too),
#   so the venv is self-contained.
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_NO_EDITABLE=1

WORKDIR /app

# Dependencies first, from the lock file alone: this layer is reused until uv.lock changes.
RUN --mount=type=cache,target=/root/.cache/uv \
    --mount=type=bind,source=uv.lock,target=uv.lock \
    --mount=type=bind,source=pyproject.toml,target=pyproject.toml \
    uv sync --locked --no-dev --no-install-project

# Then the project (README.md is the package's readme, which hatchling requires).
COPY pyproject.toml uv.lock README.md ./
COPY app ./app
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev


FROM python:3.11.14-slim-bookworm AS runtime

# The only directory the app user may write: local memories (MEMORY_DIR, default
# .orion/memories) when the container runs without GCS_MEMORIES_BUCKET.
RUN groupadd --system --gid 10001 orion \
    && useradd --system --uid 10001 --gid orion --no-create-home --shell /usr/sbin/nologin orion \
    && install -d --owner=orion --group=orion /app/.orion

WORKDIR /app

# Only the venv: the project is installed in it as a wheel (UV_NO_EDITABLE), so the source
# tree is not needed. Same path as in the builder: the venv's scripts have absolute shebangs.
COPY --from=builder /app/.venv /app/.venv

# PYTHONDONTWRITEBYTECODE: the .pyc files were compiled at build time and the venv is not
# writable by the app user anyway.
ENV PATH="/app/.venv/bin:${PATH}" \
    PORT=8080 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# Numeric, so the runtime can tell it is not root without reading /etc/passwd.
USER 10001:10001

EXPOSE 8080

# Cloud Run sets PORT; `serve` forces the HTTP Events API on 0.0.0.0:$PORT.
CMD ["orion", "serve"]
