"""The bundled local language model: a Qwen2.5 GGUF run in process by llama.cpp (llama-cpp-python).

`LocalChat` implements `ChatBackend` like the OpenAI client does, so every stage that needs a model
(answers, the no-RAG control, HyDE, multi-query) runs offline on a real one:

- the chat template is the GGUF's own (llama-cpp-python reads `tokenizer.chat_template`);
- temperature 0 (greedy) and a fixed seed by default, so a classroom demo repeats word for word (after the
  same earlier calls: llama.cpp reuses the KV cache a prompt shares with the previous one, and a different
  reused prefix can change the arithmetic enough to change a greedy answer; docs/local-llm.md measured 3 of 20);
- `max_tokens` is cut to what the context window leaves after the prompt; `prompt_budget` tells the
  caller how many prompt tokens fit, so it can drop whole context blocks instead (rag/answer/prompt.py);
- `grammar` (GBNF text) constrains what may be written, e.g. only real refs inside brackets;
- one llama.cpp context is not thread-safe, and one object serves every browser session, so calls are
  serialised by a lock: a caller that has to wait hears "queued" through its `RunControl`, can stop
  while it waits, and a stopped generation releases the model at its next token;
- the rules are paid for once: the KV state of everything before a prompt's last message (the answer's
  rules and worked examples, the no-RAG instruction, a judge's instructions) is computed once and kept (`PREFIX_STATES` of them, a few MB
  each); every call restores its own, then evaluates only the rest. Each call therefore starts from the
  same state whatever ran before it (a no-RAG call in between included), so greedy answers repeat.

Threads: `RAG_LLM_THREADS` (else `RAG_THREADS`, else 1); answer length: `RAG_LLM_MAX_TOKENS` (else 384). On two contended cores, two llama.cpp threads ran
8-10x slower than one; bench/bench_local_llm.py measures 1 vs 2 on the machine at hand.
Not handled here: finding and assembling the weights (rag/models/gguf_parts.py), prompts, citations.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rag import config
from rag.errors import GenerationCancelled, LLMError, ModelUnavailableError
from rag.messages import Msg
from rag.models.control import RunControl, acquire_queued
from rag.models.gguf_parts import GGUF_MODELS, assemble, is_installed, spec_for
from rag.models.llm import check_messages

DEFAULT_MODEL = "0.5b"  # chosen from the measured figures in docs/local-llm.md ("The bundled local LLM")
N_CTX = 4096  # tokens: five FAQ chunks plus rules and question take ~1,200; uploads' chunks are longer
_MESSAGE_OVERHEAD = 6  # template tokens per message (<|im_start|>role\n ... <|im_end|>\n), rounded up
_SAFETY = 16  # tokens kept free so an approximate count never overflows the window
PREFIX_STATES = 4  # system-message KV states kept (answer rules, no-RAG, judges), least recently used out
PREFIX_MIN = 32  # a system message shorter than this is not worth a saved state


def local_label(key: str = DEFAULT_MODEL) -> str:
    """The label a bundled model's LocalChat carries (what its cached outputs are keyed by), without loading it."""
    spec = spec_for(key)  # the English text is also what cached extractions and summaries are keyed by
    return Msg(en=f"{spec.title} {spec.quant} · bundled · llama.cpp, local", zh=f"{spec.title} {spec.quant} · 随附 · llama.cpp，本机运行")


def engine_available() -> tuple[bool, str]:
    """(True, "") when llama-cpp-python imports, else (False, what to install)."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False, Msg(en="llama-cpp-python is not installed: pip install llama-cpp-python==0.3.36 "
                          "(it compiles llama.cpp, about 5-10 minutes, and needs a C/C++ compiler)",
                          zh="没有安装 llama-cpp-python：pip install llama-cpp-python==0.3.36"
                          "（要编译 llama.cpp，约 5-10 分钟，需要 C/C++ 编译器）")
    return True, ""


def local_available(key: str = DEFAULT_MODEL) -> tuple[bool, str]:
    """(True, "") when the engine and model `key` are installed, else (False, the reason with the fix)."""
    ok, why = engine_available()
    if not ok:
        return False, why
    spec = spec_for(key)
    if not is_installed(spec):
        return False, Msg(en=f"the bundled model {spec.title} is not installed: {spec.pip_line()}",
                          zh=f"随附的模型 {spec.title} 没有安装：{spec.pip_line()}")
    return True, ""


_SELFTEST = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)
out = llm("The capital of France is", max_tokens=2, temperature=0)
print("ok" if out["choices"] else "empty")
"""
_engine_checked: dict[str, str] = {}  # model path -> "" (works) or why not, once per process


def engine_selftest(model_path: Path) -> str:
    """"" when llama.cpp reads a short prompt with this model in a child process, else why not.

    A build of llama.cpp for the wrong CPU features does not raise, it kills the process (e.g. AMX
    tiles on a VM that does not grant them: SIGSEGV on the first batched prompt). The app must not die
    with it, so the first load tries in a child process; the verdict is kept beside the model file,
    keyed by the engine's own files and this CPU's flags, so an upgrade, a rebuild or a cache moved to
    another CPU is tried again.
    """
    import llama_cpp

    key = str(model_path)
    if key in _engine_checked:
        return _engine_checked[key]
    lib = Path(llama_cpp.__file__).parent
    libs = sorted(lib.glob("lib/*.so")) or sorted(lib.glob("**/*.so"))
    fingerprint = ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in libs)
    fingerprint += ";cpu:" + cpu_fingerprint()  # a cache moved to a host without the same instructions tests again
    stamp = model_path.with_name(model_path.name + ".engine-ok")
    try:
        if stamp.read_text("utf-8") == fingerprint:
            _engine_checked[key] = ""
            return ""
    except OSError:
        pass
    why: str  # "" when it works, else a Msg saying why and the fix
    try:
        run = subprocess.run([sys.executable, "-c", _SELFTEST, str(model_path)], capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        why = Msg(en="llama.cpp did not answer a two-token test within 120 s",
                  zh="llama.cpp 在 120 秒内没有回答一个两个 token 的测试")
    else:
        if run.returncode == 0 and run.stdout.strip().endswith("ok"):
            why = ""
            try:
                stamp.write_text(fingerprint, "utf-8")
            except OSError:
                pass
        else:
            sig = f"signal {-run.returncode}" if run.returncode < 0 else f"exit {run.returncode}"
            fix = ".venv/bin/pip cache remove llama_cpp_python && bash scripts/install.sh --force-reinstall"
            why = Msg(en=f"llama.cpp crashed reading a test prompt ({sig}): this build does not suit the CPU. Rebuild "
                      f"it with scripts/install.sh (it turns off AMX, which many VMs do not grant): {fix}",
                      zh=f"llama.cpp 读测试提示词时崩溃了（{sig}）：这个编译版本不适合这颗 CPU。用 scripts/install.sh "
                      f"重新编译（它会关掉很多虚拟机不提供的 AMX）：{fix}")
    _engine_checked[key] = why
    return why


def cpu_fingerprint() -> str:
    """A digest of this CPU's instruction-set flags (/proc/cpuinfo), or of what the platform says elsewhere: a
    build that ran here may crash on a CPU without the same instructions."""
    import hashlib
    import platform

    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text("utf-8", "replace").splitlines()
                     if line.startswith(("flags", "Features")))
    except (OSError, StopIteration):
        flags = f"{platform.machine()} {platform.processor()}"
    return hashlib.sha1(" ".join(sorted(flags.split(":", 1)[-1].split())).encode()).hexdigest()[:16]


def default_threads() -> int:
    return config.value("RAG_LLM_THREADS") or config.value("RAG_THREADS")


class LocalChat:
    """`ChatBackend` on a bundled GGUF through llama.cpp, shared read-only by every session."""

    name = "local"
    supports_grammar = True
    supports_logprobs = True

    def __init__(self, model: str = DEFAULT_MODEL, n_ctx: int = N_CTX, threads: int | None = None,
                 seed: int = 0, temperature: float = 0.0, max_tokens: int | None = None,
                 model_path: str | os.PathLike | None = None):
        # Seven parameters, on purpose: each is one of the engine's own settings (llama.cpp's Llama), every one
        # defaulted; a settings object would only rename them.
        ok, why = engine_available()
        if not ok:
            raise ModelUnavailableError(why)
        from llama_cpp import Llama

        self.spec = spec_for(model)
        self.path = Path(model_path) if model_path is not None else assemble(self.spec)
        broken = engine_selftest(self.path)
        if broken:
            raise ModelUnavailableError(broken)
        self.n_ctx = int(n_ctx)
        self.threads = default_threads() if threads is None else max(1, int(threads))
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens or config.value("RAG_LLM_MAX_TOKENS")
        self.label = local_label(self.spec.key)
        self._lock = threading.Lock()  # one generation at a time: llama.cpp contexts are not thread-safe
        self._grammars: OrderedDict[str, object] = OrderedDict()  # GBNF text -> compiled grammar (under _lock)
        self._prefixes: OrderedDict[tuple, tuple[bytes, np.ndarray]] = OrderedDict()  # head tokens -> KV state
        try:
            self._llm = Llama(model_path=str(self.path), n_ctx=self.n_ctx, n_threads=self.threads,
                              n_threads_batch=self.threads, seed=seed, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise ModelUnavailableError(Msg(en=f"llama.cpp could not load {self.path} ({exc}); delete the file so it "
                                            "is assembled again from the installed parts",
                                            zh=f"llama.cpp 载入不了 {self.path}（{exc}）；删掉这个文件，它会从已安装的"
                                            "分包重新拼装")) from exc

    def __repr__(self) -> str:
        return f"LocalChat({self.label!r}, n_ctx={self.n_ctx}, threads={self.threads})"

    # ---------------------------------------------------------------------------------- sizing

    def count_tokens(self, messages: list[dict]) -> int:
        """Prompt tokens of `messages` as the chat template will lay them out (a close upper estimate)."""
        total = 3  # the assistant turn's opening
        for m in messages:
            total += _MESSAGE_OVERHEAD + len(self._llm.tokenize(str(m["content"]).encode("utf-8"),
                                                                add_bos=False, special=False))
        return total

    @property
    def prompt_budget(self) -> int:
        """Prompt tokens that still leave room for a full answer of `max_tokens`."""
        return self.n_ctx - self.max_tokens - _SAFETY

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    # ------------------------------------------------------------------------------ generation

    def complete(self, messages: list[dict], *, stream: bool = False, temperature: float | None = None,
                 max_tokens: int | None = None, grammar: str | None = None,
                 control: RunControl | None = None) -> str | Iterator[str]:
        """The answer text, or (stream=True) an iterator of text deltas that holds the model while it runs."""
        check_messages(messages)
        prompt_tokens = self.count_tokens(messages)
        room = self.n_ctx - prompt_tokens - _SAFETY
        if room < 8:
            raise LLMError(f"{self.label}: the prompt is {prompt_tokens} tokens and the context window is "
                           f"{self.n_ctx}: use fewer or shorter chunks (lower top_k or the chunk size)")
        limit = min(max_tokens or self.max_tokens, room)
        temp = self.temperature if temperature is None else temperature
        deltas = self._stream(messages, temp, grammar, limit, control, prompt_tokens)
        return deltas if stream else "".join(deltas)

    def _acquire(self, control: RunControl | None) -> None:
        """Take the model, with the queued notice and Stop while waiting (control.acquire_queued)."""
        acquire_queued(self._lock, control, self.label, "the model")

    def _head_tokens(self, messages: list[dict]) -> list[int] | None:
        """The tokens of every message before the last (the rules, and worked examples sent as earlier turns)
        as the ChatML template lays them out, or None (nothing before the last message, too short to be worth
        a state, or a model whose template is not ChatML)."""
        if len(messages) < 2 or messages[0].get("role") != "system":
            return None
        if "<|im_start|>" not in str(self._llm.metadata.get("tokenizer.chat_template", "")):
            return None
        head = self._llm.tokenize(chatml(messages[:-1]).encode("utf-8"), add_bos=False, special=True)
        return head if len(head) >= PREFIX_MIN else None

    def _restore_prefix(self, messages: list[dict], control: RunControl | None) -> None:
        """Put the KV state of exactly this prompt's system message in place (called holding the lock), so
        llama.cpp evaluates only what follows it: restored from a saved state, or computed once and saved.
        Whatever the context held beyond the head is discarded, so every call starts from the same state."""
        import ctypes

        import llama_cpp

        head = self._head_tokens(messages)
        if head is None:
            return
        llm, key = self._llm, tuple(head)
        ctx = llm._ctx.ctx
        if key in self._prefixes:
            data, ids = self._prefixes[key]
            self._prefixes.move_to_end(key)
            buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
            if llama_cpp.llama_state_set_data(ctx, buf, len(data)) != len(data):
                raise LLMError(f"{self.label}: could not restore the saved state of the prompt's rules")
            llm.input_ids[: len(ids)] = ids
            llm.n_tokens = len(ids)
            how = "restored"
        else:
            llm.reset()
            llm.eval(head)
            size = llama_cpp.llama_state_get_size(ctx)
            buf = (ctypes.c_uint8 * size)()
            n = llama_cpp.llama_state_get_data(ctx, buf, size)
            self._prefixes[key] = (bytes(buf)[:n], llm.input_ids[: llm.n_tokens].copy())
            while len(self._prefixes) > PREFIX_STATES:
                self._prefixes.popitem(last=False)
            how = "computed"
        if control is not None:
            control.stats["cached_prefix_tokens"] = len(head) if how == "restored" else 0
            control.stats["prefix_tokens"] = len(head)

    def _grammar(self, text: str):
        from llama_cpp import LlamaGrammar

        if text not in self._grammars:
            try:
                self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"the output grammar does not parse ({exc})") from exc
            while len(self._grammars) > 16:
                self._grammars.popitem(last=False)
        return self._grammars[text]

    def _stream(self, messages, temperature, grammar, max_tokens, control, prompt_tokens) -> Iterator[str]:
        self._acquire(control)
        try:
            if control is not None:
                control.status("running")
                control.stats.update(prompt_tokens=prompt_tokens, tokens=0)
            t0 = time.perf_counter()
            self._restore_prefix(messages, control)
            first = None
            # with stream=True llama_cpp returns a generator of chunk dicts (its annotation is the union of both modes)
            chunks: Any = self._llm.create_chat_completion(
                messages=messages, stream=True, temperature=temperature, seed=self.seed,
                max_tokens=max_tokens, grammar=self._grammar(grammar) if grammar else None)
            try:
                for chunk in chunks:
                    if control is not None and control.stopped:
                        raise GenerationCancelled(f"{self.label}: generation stopped")
                    choice = chunk["choices"][0]
                    delta = choice.get("delta", {}).get("content")
                    if not delta:
                        continue
                    now = time.perf_counter()
                    if first is None:
                        first = now
                    if control is not None:
                        control.stats["tokens"] += 1
                        control.stats["first_token_s"] = first - t0
                        control.stats["decode_s"] = now - first
                    yield delta
            finally:
                chunks.close()
        finally:
            self._lock.release()


    # --------------------------------------------------------------------------- next-token judge

    def next_token_logprobs(self, messages: list[dict], candidates: Sequence[str], *,
                            control: RunControl | None = None) -> dict[str, float]:
        """Log-probability of each candidate's first token as the assistant's first token after `messages`
        (a yes/no judge reads P("yes") here). The prompt is laid out in the model's ChatML template; the part
        it shares with the previous call (llama.cpp's KV cache) is not evaluated again, so judging many
        passages for one question costs each passage's own tokens, not the instructions' each time."""
        tokens = self._chatml_tokens(messages, "a judge prompt")
        ids = [self._llm.tokenize(c.encode("utf-8"), add_bos=False, special=False)[0] for c in candidates]
        rows = self._eval_rows(messages, tokens, 1, control)
        return {c: float(rows[0][i]) for c, i in zip(candidates, ids)}

    def continuation_logprobs(self, messages: list[dict], continuation: str, *,
                              control: RunControl | None = None) -> list[float]:
        """Log-probability of each token of `continuation` as the assistant's reply to `messages`, every token
        given the ones before it (teacher forcing: nothing is sampled). The sum is log P(reply | prompt); what
        a model finds likely is what it would have chosen. Same KV reuse as next_token_logprobs."""
        head = self._chatml_tokens(messages, "a scoring prompt")
        reply = self._llm.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)
        if not reply:
            return []
        if len(reply) >= self._llm.n_batch:
            raise LLMError(f"{self.label}: a reply of {len(reply)} tokens is longer than one batch "
                           f"({self._llm.n_batch}): score a shorter one")
        if len(head) + len(reply) >= self.n_ctx - _SAFETY:
            raise LLMError(f"{self.label}: a prompt and reply of {len(head) + len(reply)} tokens do not fit the "
                           f"{self.n_ctx}-token window: shorten them")
        rows = self._eval_rows(messages, head + reply, len(reply) + 1, control)
        return [float(rows[j][t]) for j, t in enumerate(reply)]  # row j: the distribution before reply[j]

    def _chatml_tokens(self, messages: list[dict], what: str) -> list[int]:
        """`messages` laid out in ChatML up to the assistant turn's opening, as tokens."""
        check_messages(messages)
        template = str(self._llm.metadata.get("tokenizer.chat_template", ""))
        if "<|im_start|>" not in template:
            raise LLMError(f"{self.label}: scoring lays prompts out in ChatML; this model's template is another")
        tokens = self._llm.tokenize(chatml(messages, reply=True).encode("utf-8"), add_bos=False,
                                    special=True)
        if len(tokens) >= self.n_ctx - _SAFETY:
            raise LLMError(f"{self.label}: {what} of {len(tokens)} tokens does not fit the {self.n_ctx}-token "
                           "window: shorten the passages")
        return tokens

    def _eval_rows(self, messages: list[dict], tokens: list[int], last: int,
                   control: RunControl | None) -> np.ndarray:
        """Evaluate `tokens` (reusing the KV state of what the context already holds of them) and return the
        log-softmax of the model's next-token distribution at each of the last `last` positions."""
        self._acquire(control)
        try:
            if control is not None:
                control.status("running")
            llm = self._llm
            keep = _shared(llm.input_ids[: llm.n_tokens].tolist(), tokens)
            head = self._head_tokens(messages)
            if head is None or keep < len(head):
                # the context does not hold this prompt's rules: start from their saved state. When it holds
                # more of the prompt (the previous candidate scored against the same passages), that is kept:
                # eight candidates after one long context cost one evaluation of it, not eight
                self._restore_prefix(messages, control)
                keep = _shared(llm.input_ids[: llm.n_tokens].tolist(), tokens)
            keep = min(keep, len(tokens) - last)  # evaluate at least the positions whose logits are read
            todo = tokens[keep:]
            llm.n_tokens = keep
            llm._ctx.kv_cache_seq_rm(-1, keep, -1)
            if last == 1:
                llm.eval(todo)
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(1, llm.n_vocab()))
            else:  # every position's logits: one batch with all outputs on (llm.eval keeps only the last)
                if len(todo) > llm.n_batch:
                    llm.eval(todo[: len(todo) - last])
                    keep, todo = keep + len(todo) - last, todo[len(todo) - last:]
                llm._batch.set_batch(batch=todo, n_past=keep, logits_all=True)
                llm._ctx.decode(llm._batch)
                llm.input_ids[keep: keep + len(todo)] = todo
                llm.n_tokens = keep + len(todo)
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(todo), llm.n_vocab()))
            rows = np.array(logits[-last:], dtype=np.float64)
        finally:
            self._lock.release()
        top = rows.max(axis=1, keepdims=True)
        return rows - (top + np.log(np.exp(rows - top).sum(axis=1, keepdims=True)))


def _shared(seen: list[int], tokens: list[int]) -> int:
    """How many leading tokens the two sequences share."""
    n = 0
    for a, b in zip(seen, tokens):
        if a != b:
            break
        n += 1
    return n


def chatml(messages: list[dict], reply: bool = False) -> str:
    """`messages` as Qwen's ChatML template lays them out (the saved prefix state and the scoring prompts
    must tokenize exactly as the chat completion does); `reply`: followed by the assistant turn's opening, where
    the model's reply begins."""
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n" if reply else turns


def local_model_names() -> list[str]:
    return list(GGUF_MODELS)
