"""Loading a Hugging Face model without hanging when there is no network: fail in seconds, saying the fix.

`load_model(build, name, what, alternatives)` tries, in this order, and stops at the first that applies:
1. `name` is an existing directory: load it from there, never touching the network;
2. `name` looks like a path but no directory is there: error (a typo must not turn into a hub request);
3. the local Hugging Face cache only (`local_files_only=True`): no network at all;
4. HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set: error, since downloading is forbidden;
5. the hub does not answer within PROBE_TIMEOUT_S (`hub_reachable`): error;
6. download it.
Every failure is a ModelUnavailableError whose message names the caller's `alternatives`. Without step 5 a
machine with no network waits on huggingface_hub's retries and timeouts for minutes per file.
Not handled here: which model class is built (the caller's `build`: sentence-transformers' bi-encoder in
rag/models/embedding.py, its CrossEncoder in rag/search/rerank.py), threads and device, authentication tokens, download
progress, and retries.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable, TypeVar

from rag.errors import ModelUnavailableError
from rag.messages import Msg

PROBE_TIMEOUT_S = 3.0  # how long we wait for the model hub before declaring it unreachable

T = TypeVar("T")


def use_short_timeouts() -> None:
    """Default huggingface_hub to a 3 s metadata and 10 s download timeout unless the user set them.

    huggingface_hub reads HF_HUB_ETAG_TIMEOUT and HF_HUB_DOWNLOAD_TIMEOUT once, when it is first imported,
    so call this before importing sentence_transformers or transformers."""
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "3")
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "10")


def offline_requested() -> bool:
    """True if HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set to 1/true/yes/on (any case)."""
    return any(os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"}
               for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True if the Hugging Face endpoint answers any HTTP response within `timeout` seconds.

    The request runs in a daemon thread joined with a deadline, because a DNS lookup can outlast the
    socket timeout; a hung probe is simply abandoned."""
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    result: list[bool] = []

    def probe() -> None:
        try:
            urllib.request.urlopen(urllib.request.Request(constants.ENDPOINT, method="HEAD"), timeout=timeout)
            result.append(True)
        except urllib.error.HTTPError:
            result.append(True)  # the server answered (even 4xx/5xx): it is reachable
        except Exception:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True, name="hub-probe")
    thread.start()
    thread.join(timeout + 0.5)
    return bool(result and result[0])


def looks_like_path(name: str) -> bool:
    """True if `name` is meant as a directory rather than a hub id ("model" or "org/model")."""
    return (name.startswith((".", "/", "~")) or "\\" in name or name.count("/") > 1
            or os.path.isabs(name))


def load_model(build: Callable[..., T], name: str, what: Msg, alternatives: Msg) -> tuple[T, str]:
    """(model, source) for a local directory or hub id, following the order in the module docstring.

    build(name_or_path, **kw) constructs the model; kw is local_files_only=True except for the download.
    source is "local directory", "local HF cache" or "downloaded". `what` names the kind of model in
    messages ("cross-encoder"); `alternatives` completes "or use ..." in every error. Every error says it in both
    languages (a page shows it in its own: the upload page's custom embedder)."""
    path = Path(name).expanduser()
    if path.is_dir():
        try:
            return build(str(path), local_files_only=True), "local directory"
        except Exception as e:
            raise ModelUnavailableError(Msg(
                en=f"{path} is a directory but not a loadable {what.en} ({type(e).__name__}: {e}). It needs "
                f"config.json, weights and tokenizer files (save_pretrained); or use {alternatives.en}.",
                zh=f"{path} 是一个目录，但不是可以载入的{what.zh}（{type(e).__name__}: {e}）。它需要 config.json、权重和"
                f"分词器文件（save_pretrained 保存的）；或者改用{alternatives.zh}。")) from e
    if path.exists() or looks_like_path(name):
        raise ModelUnavailableError(Msg(
            en=f"no model directory at {path}. Give an existing model directory, a hub model name, "
            f"or use {alternatives.en}.",
            zh=f"{path} 没有模型目录。请给出一个存在的模型目录或模型库里的模型名，或者改用{alternatives.zh}。"))
    try:
        return build(name, local_files_only=True), "local HF cache"
    except (OSError, ValueError) as e:  # what transformers / huggingface_hub raise for "not in the cache"
        cache_error = e  # kept as the cause of whatever is raised next; any other error is a bug: it propagates
    if offline_requested():
        raise ModelUnavailableError(Msg(
            en=f"{what.en} {name!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE (or "
            f"TRANSFORMERS_OFFLINE) is set, so it cannot be downloaded. Download it once where the hub is "
            f"reachable, or use {alternatives.en}.",
            zh=f"{what.zh} {name!r} 不在本机的 Hugging Face 缓存里，而且设置了 HF_HUB_OFFLINE（或 TRANSFORMERS_OFFLINE），"
            f"所以不能下载。请在能连上模型库的机器上先下载一次，或者改用{alternatives.zh}。")) from cache_error
    if not hub_reachable():
        raise ModelUnavailableError(Msg(
            en=f"{what.en} {name!r} is not in the local Hugging Face cache and the model hub cannot be reached "
            f"(no network?). Download it once where the hub is reachable, or use {alternatives.en}.",
            zh=f"{what.zh} {name!r} 不在本机的 Hugging Face 缓存里，也连不上模型库（没有网络？）。请在能连上模型库的"
            f"机器上先下载一次，或者改用{alternatives.zh}。")) from cache_error
    try:
        return build(name), "downloaded"
    except Exception as e:
        raise ModelUnavailableError(Msg(
            en=f"could not load {what.en} {name!r} ({type(e).__name__}: {e}). Check the model name, or use "
            f"{alternatives.en}.",
            zh=f"载入不了{what.zh} {name!r}（{type(e).__name__}: {e}）。请检查模型名，或者改用{alternatives.zh}。")) from e
