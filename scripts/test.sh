#!/usr/bin/env bash
# Install everything the tests need into ./.venv (the app and its bundled models through
# scripts/install.sh, the dev requirements, llama.cpp's server through scripts/build_server.sh, and the system
# Chromium for the real-browser test), then run
# lint (ruff) and the whole suite. Works on a fresh machine; re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh -r requirements-dev.txt
# llama.cpp's own server, for the class setup's tests (tests/test_llama_server.py): built once per version and CPU.
bash scripts/build_server.sh
# CJK fonts: without them Chinese renders as empty boxes in the browser screenshots.
if ! dpkg -s chromium fonts-noto-cjk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null) \
      || echo "warning: could not install chromium; the real-browser test will be skipped" >&2
  else
    echo "note: chromium not found and apt-get unavailable; the real-browser test will be skipped" >&2
  fi
fi
# Lint first (pyproject.toml's [tool.ruff]): a finding fails the run before the tests start.
.venv/bin/ruff check .
# Then types (pyproject.toml's [tool.mypy]): rag/ and ui/, no module skipped.
.venv/bin/python -m mypy
exec .venv/bin/python -m pytest -q "$@"
