"""Both languages complete on every page: in Chinese mode no English sentence outside code, names and the documents
themselves; in English mode no Chinese outside the documents (the bundled knowledge base, the question).

Every page is rendered through AppTest in each language, with the answer and the loops (on the fake
OpenAI-compatible server, tests/fake_openai.py) run, and every text element is read: Markdown, captions, alerts,
HTML, metric and widget labels, table headers. An "English sentence" is four or more English words in a row; a
run that also occurs in the corpus is the corpus's own. The Markdown handouts are read the same way.
Not handled here: what the words say (each page's own tests).
"""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.test_app import PAGES, go, new_app

ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ ,:;()/]+[A-Za-z][A-Za-z'’-]*){3,}")
CHINESE_RUN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff01-\uff5e]+")
QUESTION = "混合检索里的 RRF 是怎么计算的？"


def texts(at) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "info", "warning", "success", "error", "title", "header", "subheader", "text"):
        out += [str(e.value) for e in at.get(kind)]
    out += [re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script)\b.*?</\1>", " ", html.unescape(e.proto.body), flags=re.S))
            for e in at.get("html")]
    out += [e.label for e in at.get("metric")] + [e.label for e in at.get("button")]
    for kind in ("radio", "selectbox", "multiselect", "slider", "toggle", "text_area", "text_input", "number_input",
                 "expander", "tab"):
        out += [str(getattr(e, "label", "")) for e in at.get(kind)]
    # what a choice offers, as shown (the language picker names both languages on purpose)
    out += [str(o) for e in at.get("radio") if e.key != "ui.lang" for o in e.options]
    for frame in at.get("dataframe"):
        out += [str(c) for c in frame.value.columns]
    return out


def _without_code(text: str) -> str:
    return re.sub(r"`[^`]*`", " ", re.sub(r"```.*?```", " ", text, flags=re.S))


def leaks(lang: str, blobs: list[str], corpus: str) -> list[str]:
    """The runs of the other language in `blobs` that are not the corpus's own words."""
    found = set()
    for blob in blobs:
        blob = _without_code(blob)
        if lang == "zh":
            found |= {m.group(0) for m in ENGLISH_RUN.finditer(blob) if m.group(0).lower() not in corpus.lower()}
        else:
            found |= {m.group(0) for m in CHINESE_RUN.finditer(blob)
                      if m.group(0) not in corpus and m.group(0) not in QUESTION}
    return sorted(found)


def model_words(at) -> list[str]:
    """Every prompt and every model reply of this session's runs (their language is the question's, not the UI's)."""
    traces = [at.session_state["answer.last_trace"]]
    loops = list(at.session_state["memo.loop"].values()) if "memo.loop" in at.session_state else []
    out = []
    for lt in loops:
        traces.append(lt.final)
        for step in lt.steps:
            out += [step.thought, step.query, step.raw] + [str(m.get("content", "")) for m in (step.prompt or [])]
            out += [v.asked for v in step.verdicts] + [x.sentence for x in step.supports]
            out += [str(m.get("content", "")) for v in step.verdicts for m in (v.messages or [])]
    for tr in filter(None, traces):
        out += [tr.answer, tr.no_rag_answer or "", *[str(v) for v in tr.rewrites.values()]]
        for prompt in (tr.prompt, tr.no_rag_prompt):
            out += [m["content"] for m in (prompt.messages if prompt else [])]
        out += [s.sentence for s in (tr.audit.sentences if tr.audit else [])]
    from rag.loops.community import shipped

    for s in shipped().values():  # the bundled model's community summaries, and the sentences the audit dropped
        out += [s.text, *(d for d, _ in s.dropped)]
    return [x for x in out if x]


@pytest.fixture(scope="module")
def corpus_text() -> str:
    from rag.ingest.documents import load_knowledge_base

    return "\n".join(d.text for d in load_knowledge_base())


def every_page(lang: str, fake_llm):
    """Each page in turn, in `lang`, answered by the fake endpoint, with the loops and an evaluation run:
    yields (page name, the AppTest on that page)."""
    at = new_app()
    at.sidebar.radio(key="ui.lang").set_value(lang)
    at.sidebar.radio(key="llm.generator").set_value("endpoint")
    at.sidebar.text_input(key="llm.base_url").set_value(fake_llm.url)
    at.sidebar.text_input(key="llm.model").set_value(fake_llm.model)
    at.sidebar.text_input(key="llm.api_key").set_value("sk-lang")
    at.run()
    for name in PAGES:
        at = go(at, name)
        if name == "loops":
            at.button(key="loops.run").click().run()
        if name == "evaluation":  # its results: the strategy table, what ran, the wins
            at.number_input(key="eval.limit").set_value(3).run()
            at.button(key="eval.run").click().run()
        yield name, at


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_speaks_one_language(lang, corpus_text, fake_llm, cache_dir, app_test):
    found = {}
    at = None
    for name, at in every_page(lang, fake_llm):
        found[name] = leaks(lang, texts(at) + [str(e.label) for e in at.sidebar.get("radio")], corpus_text)
    trace = at.session_state["answer.last_trace"]
    found["handout"] = leaks(lang, [trace.to_markdown(lang)], corpus_text)
    own = corpus_text + "\n".join(model_words(at))  # the prompts and what the model wrote stay in their language
    found = {page: [r for r in runs if r not in own] for page, runs in found.items()}
    found = {page: runs for page, runs in found.items() if runs}
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


def test_every_audit_check_has_a_name_in_both_languages():
    """The page names each check beside its reason (ui/audit_view.CHECK_NAMES); a check the audit gained without an
    entry there showed its code name ("apart", "adds") in Chinese mode."""
    from pathlib import Path

    from ui.audit_view import CHECK_NAMES

    made = set()
    for path in (Path(__file__).resolve().parents[1] / "rag" / "audit").rglob("*.py"):  # checks/ too
        text = path.read_text(encoding="utf-8")  # a check module names itself once (NAME); verifier.py in its Check
        made |= set(re.findall(r'Check\("([a-z-]+)"', text)) | set(re.findall(r'^NAME = "([a-z-]+)"', text, re.M))
    assert {"numbers", "apart", "adds"} <= made  # the scan finds the checks
    assert made <= set(CHECK_NAMES)
    assert all(re.search(r"[\u4e00-\u9fff]", n.zh) and n.en.isascii() for n in CHECK_NAMES.values())
