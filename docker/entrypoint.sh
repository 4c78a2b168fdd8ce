#!/bin/sh
# The container's start: bring the database schema up to date, then run mafiabot with the
# given arguments (the image's default: `run --discord`). `exec`, so mafiabot gets the
# SIGTERM of `docker stop` and shuts down gracefully. .ci/dockerfile-check runs this too.
set -eu
mafiabot db upgrade
exec mafiabot "$@"
