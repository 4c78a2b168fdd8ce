#!/bin/sh
# Install mafiabot with the exact versions in uv.lock, without the development tools, into
# $UV_PROJECT_ENVIRONMENT (default .venv). The Dockerfile's build stage runs this, and so does
# .ci/dockerfile-check in a fresh virtualenv: CI runs the image's install, not a copy of it.
#
#   docker/install.sh deps   only the dependencies (a cached layer that changes with uv.lock)
#   docker/install.sh        the dependencies and mafiabot itself, as a wheel (not editable)
#
# The research commands' extra (matplotlib, scikit-learn: `mafiabot report`, `mafiabot
# likeness`) is left out: a running bot needs none of it. MAFIABOT_EXTRAS=research (the
# Dockerfile's build argument of that name) adds it.
set -eu
extras=""
for extra in $(echo "${MAFIABOT_EXTRAS:-}" | tr ',' ' '); do
    extras="$extras --extra $extra"
done
if [ "${1:-}" = "deps" ]; then
    exec uv sync --frozen --no-dev --no-install-project $extras
fi
exec uv sync --frozen --no-dev --no-editable $extras
