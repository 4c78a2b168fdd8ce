#!/bin/sh
# Installs uv (the project's installer) into a virtual environment of the project's own,
# $1 (default .tools/uv-venv), with the python3 on PATH. A pip install outside a venv is
# refused by an "externally managed" system Python (PEP 668: Debian 12, Ubuntu 23.04+);
# inside one it is allowed everywhere, pyenv's and the system's Pythons alike.
set -eu
venv="${1:-.tools/uv-venv}"
python="${PYTHON:-python3}"

say() { printf 'make: %s\n' "$*" >&2; }

if ! command -v "$python" >/dev/null 2>&1; then
    say "no $python on PATH: install Python 3.11+ (Debian/Ubuntu: apt-get install python3 python3-venv)"
    exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
    rm -rf "$venv"
    if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        say "$python can't make a virtual environment (no venv/ensurepip); add it with: apt-get install python3-venv"
        exit 1
    fi
fi
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check uv; then
    say "could not install uv from PyPI into $venv (see pip's message above)"
    exit 1
fi
