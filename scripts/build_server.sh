#!/usr/bin/env bash
# Build llama.cpp's own HTTP server (llama-server: continuous batching, parallel slots) for a class on one machine.
#   bash scripts/build_server.sh        after scripts/install.sh; prints the binary's version when done
# The source is the llama.cpp that llama-cpp-python (already in .venv) was compiled from: its sdist, from the
# package registry, same version, so the server and the in-process model run the same engine. The first build
# compiles llama.cpp again (about 6-10 minutes on two cores, with cmake and a C/C++ compiler); the binary is
# kept per version and CPU under ~/.cache/inspectable-rag, so later runs take seconds. It lands in
# .venv/bin/llama-server, where rag/models/llama_server.py looks (or set RAG_LLAMA_SERVER_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "no .venv: run bash scripts/install.sh first" >&2; exit 1; }
VERSION=$("$PY" -c "import importlib.metadata as m; print(m.version('llama_cpp_python'))")
CPU=$("$PY" -c "from rag.models.local_llm import cpu_fingerprint; print(cpu_fingerprint())")
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/inspectable-rag/llama-server-$VERSION-$CPU"
if [ ! -x "$CACHE/llama-server" ]; then
  if ! command -v cmake >/dev/null; then  # the package registry has it (as llama-cpp-python's own build uses it)
    "$PY" -m pip install -q cmake ninja
    export PATH="$PWD/.venv/bin:$PATH"
  fi
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  echo "building llama-server $VERSION (llama.cpp from the llama-cpp-python sdist; 6-10 minutes the first time)"
  "$PY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$WORK"
  tar xzf "$WORK"/llama_cpp_python-*.tar.gz -C "$WORK"
  SRC=$(echo "$WORK"/llama_cpp_python-*/vendor/llama.cpp)
  FLAGS=""
  if [ "$(uname -m)" = x86_64 ]; then
    FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"  # as scripts/install.sh: VMs here do not grant AMX state
  fi
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  # No web UI (the app is the UI; the prebuilt one would be downloaded from a model hub), no TLS (127.0.0.1 only),
  # static libraries so the one binary is all there is to copy.
  CFLAGS="${CFLAGS:-} $FLAGS" CXXFLAGS="${CXXFLAGS:-} $FLAGS" cmake -S "$SRC" -B "$WORK/build" "${GEN[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF > "$WORK/configure.log" || { tail -30 "$WORK/configure.log" >&2; exit 1; }
  cmake --build "$WORK/build" --target llama-server -j "$(nproc)" > "$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log" >&2; exit 1; }
  mkdir -p "$CACHE"
  cp "$WORK/build/bin/llama-server" "$CACHE/llama-server.tmp" && mv "$CACHE/llama-server.tmp" "$CACHE/llama-server"
fi
install -m 755 "$CACHE/llama-server" .venv/bin/llama-server
.venv/bin/llama-server --version 2>&1 | tail -2
