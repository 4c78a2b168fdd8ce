#!/bin/sh
# Install mafiabot with the exact versions in uv.lock, without the development tools, into
# $UV_PROJECT_ENVIRONMENT (default .venv). The Dockerfile's build stage runs this, and so does
# .ci/dockerfile-check in a fresh virtualenv: CI runs the image's install, not a copy of it.
#
#   docker/install.sh deps   only the dependencies (a cached layer that changes with uv.lock)
#   docker/install.sh        the dependencies and mafiabot itself, as a wheel (not editable)
set -eu
if [ "${1:-}" = "deps" ]; then
    exec uv sync --frozen --no-dev --no-install-project
fi
exec uv sync --frozen --no-dev --no-editable
