# syntax=docker/dockerfile:1
# mafiabot: `docker compose up` (compose.yaml) runs it with PostgreSQL 16.
# The install and start steps live in docker/install.sh and docker/entrypoint.sh, which CI
# also runs in a fresh virtualenv (.ci/dockerfile-check).

# The image runs the bot: it leaves out the research commands' extra (matplotlib, scikit-learn
# for `mafiabot report` and `mafiabot likeness`). To have them in the image too:
#   docker build --build-arg MAFIABOT_EXTRAS=research .
# (or in compose.yaml: build: {context: ., args: {MAFIABOT_EXTRAS: research}})

# --- build: the locked dependencies, then mafiabot, into /app/.venv ---------------------------
FROM python:3.11-slim-bookworm AS build
COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /usr/local/bin/uv
# (a build argument is in the environment of the RUN steps below: docker/install.sh reads it)
ARG MAFIABOT_EXTRAS=""
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /src
COPY docker/install.sh docker/install.sh
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv sh docker/install.sh deps
COPY . .
RUN --mount=type=cache,target=/root/.cache/uv sh docker/install.sh

# --- run: the virtualenv and the entrypoint only, as a user without privileges ----------------
FROM python:3.11-slim-bookworm
RUN groupadd --system --gid 10001 mafiabot \
    && useradd --system --uid 10001 --gid mafiabot --home-dir /data --no-create-home mafiabot \
    && mkdir -p /data \
    && chown mafiabot:mafiabot /data
COPY --from=build /app/.venv /app/.venv
COPY docker/entrypoint.sh /app/entrypoint.sh
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    MAFIABOT_DATA_DIR=/data \
    MAFIABOT_HTTP_ADDR=127.0.0.1:9464 \
    MAFIABOT_LOG_FORMAT=json
USER mafiabot
WORKDIR /data
VOLUME ["/data"]
# /healthz and /metrics answer on the container's loopback only (its HEALTHCHECK reaches them):
# compose.yaml listens on every interface of the container and publishes the port on the host's
# loopback; see docs/operating.md ("Health and metrics")
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/healthz', timeout=4)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/entrypoint.sh"]
CMD ["run", "--discord"]
