"""The evaluation page's "generate from this corpus" source: generate test questions (with a progress bar, a time
estimate and a cap, and Stop keeping what is done), review them in an editable table (edit, delete, add; the
filters run again on what changed), download and upload them as JSONL, and hand the kept ones to the comparison.

Each question keeps its provenance (its chunk, its generator, every filter's verdict): dropped questions are
listed with their reason. How far such questions can be trusted is read from data/testset_trust.json, which
bench/bench_testset.py writes (`--trust-out`): the Kendall tau between the strategy order from generated
questions and from human ones, on public sets in the corpus's language.
Not handled here: generating and filtering (rag/evaluate/testset.py).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from rag.evaluate import testset
from rag.evaluate.evaluation import Query, load_queries
from rag.ingest.language import detect_lang
from rag.messages import Msg

from . import settings
from .i18n import lang, loc, tr
from .render import attempt, error_text, upload_limit_note
from .worker import run_in_worker

ss = st.session_state
TRUST = Path(__file__).resolve().parent.parent / "data" / "testset_trust.json"
# the question, then whether it was kept and why not (seen without scrolling), then the rest
COLUMNS = ("query", "kept", "why", "answerable", "gold_ids", "answer", "generator", "id")


def _trust() -> dict:
    try:
        return json.loads(TRUST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def trust_line(method: str, corpus_lang: str) -> str:
    """What the bench measured for this generator on sets in this language, in words, with its verdict."""
    sets = [r for r in _trust().get("sets", []) if r.get("lang") == corpus_lang and method in r.get("tau", {})]
    if not sets:
        return tr(zh="还没有测量过这种生成方式在这种语言上的可信度（bench/bench_testset.py）。",
                  en="How far this generator can be trusted in this language has not been measured "
                  "(bench/bench_testset.py).")

    def taus(r: dict) -> str:
        second = r.get("tau_second_sample", {}).get(method)
        return f"{r['tau'][method]:.2f}" + (f" / {second:.2f}" if second is not None else "")

    shown = ", ".join(f"{r['set']} {taus(r)} ({r['kept'][method]})" for r in sets)
    gaps = ", ".join(f"{r['set']} {r['overlap_gap'][method]:+.2f}" for r in sets)
    worst = min(min(r["tau"][method], r.get("tau_second_sample", {}).get(method, 1.0)) for r in sets)
    verdict = (tr(zh="所以只把它当粗略参考：接近的策略要用人写的问题再确认。", en="So take its ranking as a rough guide: confirm "
                  "close calls with questions people wrote.") if worst < 0.7 else
               tr(zh="这些集上它的排序可以信赖。", en="On those sets its order could be trusted."))
    return tr(zh=f"在有人写问题的测试集上，这种方式生成的问题给出的策略排序与人写问题的一致程度 Kendall τ = {shown}"
              f"（两次抽样；括号里是保留的题数；1 = 完全相同）；问题与所在片段的词重合比人写的问题多 {gaps}。" + verdict,
              en=f"On sets with questions people wrote, questions from this generator ordered the strategies as the "
              f"people's did with Kendall tau = {shown} (two samples; kept questions in brackets; 1 = the same "
              f"order); their word overlap with their chunk differed from the people's by {gaps}. " + verdict)


def _frame(questions: list[testset.TestQuestion]) -> pd.DataFrame:
    zh = lang() == "zh"
    return pd.DataFrame([{
        "id": q.qid, "query": q.query, "gold_ids": ", ".join(q.gold_ids), "answer": q.answer,
        "answerable": q.answerable, "generator": q.generator, "kept": q.kept,
        "why": "；".join(v.why.zh for v in _told(q)) if zh else "; ".join(v.why.en for v in _told(q))} for q in questions],
        columns=list(COLUMNS))


def _told(q: testset.TestQuestion) -> list[testset.Verdict]:
    """The verdicts the table's why column says: those that dropped it, and that it is a model's second try."""
    return [v for v in q.verdicts if not v.passed or v.check == "second-try"]


def _from_frame(frame: pd.DataFrame, before: dict[str, testset.TestQuestion]) -> list[testset.TestQuestion]:
    """The edited table back to questions: an unchanged id keeps its provenance, a new row is hand-written."""
    out = []
    for i, row in enumerate(frame.to_dict("records"), 1):
        cell = {k: _text(v) for k, v in row.items()}
        query = cell.get("query", "")
        if not query:
            continue  # an added row left empty
        qid = cell.get("id", "") or f"hand_{i:04d}"
        gold = tuple(g.strip() for g in cell.get("gold_ids", "").split(",") if g.strip())
        old = before.get(qid)
        flag = row.get("answerable")
        answerable = bool(flag) if _text(flag) else bool(gold)  # a new row's empty box (None, NaN): by its gold
        if old is None:
            out.append(testset.TestQuestion(qid, query, gold, "", cell.get("answer", ""), "hand-written", answerable))
        else:
            same = old.query == query
            out.append(testset.TestQuestion(qid, query, gold, old.chunk_id, cell.get("answer", ""),
                                            old.generator if same else f"{old.generator}, edited", answerable,
                                            model_answer=old.model_answer if same else "", note=old.note))
    return out


def _text(value) -> str:
    """A table cell as text: an empty cell of an added row (None or NaN) is ""."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value).strip()


def _store(questions: list[testset.TestQuestion], index_key, how: str) -> None:
    ss["testset.questions"] = questions
    ss["testset.for"] = index_key
    ss["testset.how"] = how
    ss["testset.edits"] = ss.get("testset.edits", 0) + 1  # a fresh editor for a new set (its key changes)


def _generate(index, method: str, n: int, chat) -> None:
    import time

    ss["testset.partial"] = []
    bar = st.progress(0.0, text=tr(zh="生成中…", en="Generating…"))
    started = time.monotonic()
    stop = st.empty()  # pressing it reruns the page, which stops the run; what it wrote is kept (render)
    stop.button(tr(zh="停止（保留已生成的）", en="Stop (keep what is done)"), icon=":material/stop:", key="testset.stop")

    def on_event(kind: str, payload) -> None:
        if kind == "question":
            ss["testset.partial"].append(payload)
        elif kind == "progress":  # of the chunks actually sampled (short ones are skipped), after each question
            done, total = payload
            each = (time.monotonic() - started) / done  # this run's own pace: the estimate learns as it goes
            ss[f"testset.rate.{method}"] = each
            left = tr(zh=f"还剩约 {each * (total - done):.0f} 秒（按本次每题 {each:.1f} 秒）",
                      en=f"about {each * (total - done):.0f} s left (this run: {each:.1f} s a question)")
            bar.progress(min(1.0, done / total), text=f"{done}/{total} · {left} · {ss['testset.partial'][-1].query}")

    def work(control, emit):
        return testset.generate(index.chunks, testset.Plan(n, method), testset.Asker(chat, control),
                                on_question=lambda q: emit("question", q),
                                progress=lambda done, total: emit("progress", (done, total)))

    run = attempt(run_in_worker, work, on_event)
    bar.empty()
    stop.empty()
    ss.pop("testset.partial", None)
    _store(run.questions, ss["index.key"], method)


def _estimate(index, method: str, n: int) -> tuple[float, float]:
    """testset.estimate_seconds for this index, kept per (index, method, n): it reads every chunk's prose."""
    key = (ss.get("index.key"), method, n)
    kept = ss.get("testset.estimate")
    if not kept or kept[0] != key:
        kept = (key, testset.estimate_seconds(index.chunks, testset.Plan(n, method)))
        ss["testset.estimate"] = kept
    return kept[1]


def _time_quote(index, method: str, n: int) -> str:
    """What a run of `n` chunks should take, before it starts: this session's last pace where there is one, else
    testset.estimate_seconds (each chunk asked once to twice), with the run's cap."""
    measured = ss.get(f"testset.rate.{method}")  # this session's last run, where there was one
    low, high = _estimate(index, method, n)
    if measured:  # that run's pace already holds its second tries
        low = high = n * measured
    took = (tr(zh="不到 1 秒", en="under a second") if high < 1 else
            tr(zh=f"约 {low:.0f} 秒", en=f"about {low:.0f} s") if round(high) <= round(low) else
            tr(zh=f"约 {low:.0f} 到 {high:.0f} 秒", en=f"about {low:.0f} to {high:.0f} s"))
    retry = tr(zh="，第一个问题没保留的片段会再问一次，所以有上下两个数", en="; a chunk whose first question is dropped is "
               "asked again, hence the range") if high > low else ""
    basis = (tr(zh=f"按这里上次每题 {measured:.1f} 秒", en=f"at this session's last {measured:.1f} s a question")
             if measured else
             tr(zh=f"按要问的片段数，在两核机器上测得{retry}；服务器忙时更久",
                en=f"from the number of chunks it will ask about, measured on a 2-core machine{retry}; longer while "
                "the server is busy"))
    cap = testset.PAGE_MAX_CHUNKS[method]
    return tr(zh=f"预计{took}（{basis}；生成时按本次的速度重新估计）。每次最多 {cap} 个片段，"
              f"本语料共 {len(index.chunks)} 个；更多请用命令行 rag testset generate。",
              en=f"{took[0].upper() + took[1:]} ({basis}; re-estimated from this run's own pace as it goes). At most "
              f"{cap} chunks a run, of this corpus's {len(index.chunks)}; for more use the CLI: rag testset generate.")


def render(index, chat) -> list[Query] | None:
    """The panel; the kept, answerable questions as Queries once a set is there (else None)."""
    corpus_lang = detect_lang(" ".join(c.text for c in index.chunks[:50]))
    partial = ss.pop("testset.partial", None)
    if partial:  # a run was stopped (or the page was left mid-run): keep what it wrote
        _store(testset.finish(partial, index.chunks).questions, ss["index.key"], "stopped")
    c1, c2 = st.columns(2)
    with c1:
        model = loc(testset.GENERATOR_LABELS["llm"]) + (f" · {loc(chat.label)}" if chat is not None else
                                                         tr(zh="（没有可用的语言模型）", en=" (no language model available)"))
        labels = {"auto": tr(zh="自动：有语言模型就让模型出题，否则用关键词替身", en="auto: the language model where one runs, "
                             "else the keyword stand-in") + (f" · {loc(chat.label)}" if chat is not None else
                                                             tr(zh="（现在没有模型：关键词替身）", en=" (no model now: the stand-in)")),
                  "keywords": loc(testset.GENERATOR_LABELS["keywords"]), "llm": model}
        chosen = st.radio(tr(zh="怎样出题", en="How questions are written"), list(testset.METHODS), key="testset.method",
                          format_func=labels.__getitem__)
    method = ("llm" if chat is not None else "keywords") if chosen == "auto" else chosen
    cap = min(testset.PAGE_MAX_CHUNKS[method], len(index.chunks))
    with c2:
        settings.clamp(f"testset.n.{method}", 1, max(1, cap))
        n = st.number_input(tr(zh="从多少个片段出题", en="Chunks to ask about"), 1, max(1, cap), key=f"testset.n.{method}")
        st.caption(_time_quote(index, method, int(n)))
    st.caption(trust_line(method, corpus_lang))
    b1, b2 = st.columns([1, 2])
    go = b1.button(tr(zh="生成测试题", en="Generate test questions"), icon=":material/auto_awesome:", key="testset.go",
                   disabled=method == "llm" and chat is None)
    with b2:
        up = st.file_uploader(tr(zh="或上传测试集（JSONL）", en="Or upload a test set (JSONL)"), type=["jsonl"],
                              key="testset.file")
        upload_limit_note("testset.file", ".jsonl")
    if go:
        _generate(index, method, int(n), chat)
    if up is not None and ss.get("testset.loaded") != (up.name, up.size):
        _load(up, index)
    questions: list[testset.TestQuestion] = ss.get("testset.questions") or []
    if not questions:
        st.info(tr(zh="先生成或上传一组测试题。", en="Generate or upload a set of test questions first."))
        return None
    if ss.get("testset.for") != ss["index.key"]:
        st.caption(":material/warning: " + tr(zh="这组题是在另一个索引上生成的；重新检查会按当前语料核对。",
                                               en="This set was made on another index; checking again tests it "
                                               "against the current corpus."))
    return _review(questions, index)


def _load(up, index) -> None:
    """An uploaded set: the queries reader's per-line errors; on error the set already here stays."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / (Path(up.name).name or "upload.jsonl")
        path.write_bytes(up.getvalue())
        try:
            load_queries(path)
            records = [json.loads(line) for line in up.getvalue().decode("utf-8-sig").splitlines() if line.strip()]
            questions = testset.recheck(testset.from_records(records), index.chunks)
        except Exception as exc:  # LoaderError, or a record the reader took but recheck cannot
            st.error(tr(zh="没有载入这个测试集：", en="This test set was not loaded: ") + error_text(exc) +
                     tr(zh="（已有的测试题保持不变）", en=" (the questions already here are kept)"))
            ss["testset.loaded"] = (up.name, up.size)
            return
    ss["testset.loaded"] = (up.name, up.size)
    _store(questions, ss["index.key"], "uploaded")


HOW = {"keywords": Msg(en="keywords, no model", zh="关键词，不用模型"),
       "llm": Msg(en="written by the language model", zh="语言模型出题"),
       "stopped": Msg(en="stopped: what was done", zh="已停止：保留已生成的"), "uploaded": Msg(en="uploaded", zh="上传的"),
       "edited": Msg(en="edited, checked again", zh="已编辑并重新检查")}


def _review(questions: list[testset.TestQuestion], index) -> list[Query]:
    kept = [q for q in questions if q.kept]
    dropped = len(questions) - len(kept)
    how = loc(HOW.get(ss.get("testset.how", ""), ""))
    rate = len(kept) / len(questions) if questions else 0.0
    st.caption(tr(zh=f"{len(questions)} 道题（{how}），保留 {len(kept)} 道（{rate:.0%}），去掉 {dropped} 道，原因见“去掉的原因（或第二次提问）”一列。"
                  "可以在表里修改、删除（选中行后按删除键）或在末行添加，然后点“重新检查”。",
                  en=f"{len(questions)} questions ({how}): {len(kept)} kept ({rate:.0%}), {dropped} dropped, each with its "
                  "reason in the “why dropped (or asked again)” column. Edit, delete (select rows, then Delete) or add a row at the end, "
                  "then press Check again."))
    edited = st.data_editor(
        _frame(questions), num_rows="dynamic", hide_index=True, key=f"testset.editor.{ss.get('testset.edits', 0)}",
        disabled=["generator", "kept", "why"],
        column_config={
            "id": st.column_config.TextColumn("id"),
            "query": st.column_config.TextColumn(tr(zh="问题", en="question"), width="large"),
            "gold_ids": st.column_config.TextColumn(tr(zh="标准答案文档", en="gold documents")),
            "answer": st.column_config.TextColumn(tr(zh="答案片段", en="answer span"), width="medium"),
            "answerable": st.column_config.CheckboxColumn(tr(zh="可回答", en="answerable")),
            "generator": st.column_config.TextColumn(tr(zh="出题方式", en="written by")),
            "kept": st.column_config.CheckboxColumn(tr(zh="保留", en="kept")),
            "why": st.column_config.TextColumn(tr(zh="去掉的原因（或第二次提问）", en="why dropped (or asked again)"), width="large"),
        })
    c1, c2 = st.columns(2)
    if c1.button(tr(zh="重新检查", en="Check again"), icon=":material/fact_check:", key="testset.recheck"):
        before = {q.qid: q for q in questions}
        _store(testset.recheck(_from_frame(edited, before), index.chunks), ss["index.key"], "edited")
        st.rerun()
    c2.download_button(tr(zh="下载 JSONL（保留的题）", en="Download JSONL (kept questions)"),
                       testset.to_jsonl(questions).encode("utf-8"), file_name="testset.jsonl",
                       mime="application/jsonl", icon=":material/download:", key="testset.download")
    if len({c.doc_id for c in index.chunks}) < 5:
        st.caption(":material/info: " + tr(
            zh="这个语料只有几个文档：文档排名（Hit@k、MRR、nDCG）几乎总是满分，要看带 span 的列——第几个片段含有答案片段。",
            en="This corpus has only a few documents, so document ranks (Hit@k, MRR, nDCG) are nearly always perfect: read "
            "the span columns, which say at which rank a retrieved chunk holds the answer span."))
    return [Query(q.qid, q.query, q.gold_ids, q.answerable, q.answer) for q in kept]


def signature(queries: list[Query]) -> str:
    """A key for the comparison's cache: what the kept questions ask and expect."""
    return hashlib.sha1(json.dumps([(q.query_id, q.query, q.gold_ids, q.answer) for q in queries],
                                   ensure_ascii=False).encode("utf-8")).hexdigest()
