"""The lesson panel: the current step of a lesson, drawn at the top of every page from what the pages computed
(the same memoised results they show; rag/lesson/ turns them into notices and graded checks). A step whose facts
come from something the page computes as it runs (the answer, the embedding map, the graph) waits for it: app.py
runs the script once more when the page has computed it, so the panel never shows a stale run.

A session's lesson lives in session state ("lesson.*"): which lesson, which step, the checks passed, whether the
projector view is on. The bundled lessons (data/lessons/*.toml) can be named in a link with the step and the checks
passed; a lesson a teacher uploads lives in this browser session only. Entering a step applies its settings (and its
corpus) in a button callback, before any widget is drawn, then switches to its page (app.py reads "lesson.goto").
An experiment remembers the settings it changed and puts them back on Undo or when the step is left.
Not handled here: reading lesson files and computing facts (rag/lesson/), the pages themselves.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, MutableMapping

import streamlit as st

from rag.errors import RagError
from rag.lesson import facts as F
from rag.lesson.lesson import (
    PAGE_STAGES,
    Check,
    Experiment,
    Lesson,
    LessonError,
    Step,
    choices,
    fill,
    grade,
    notice,
    parse,
)
from rag.messages import Msg, localized

from . import corpus, indexing, links, memo, models, results, settings
from .i18n import lang, t, tr
from .render import error_text, md_escape

LONGFORM_DIR = Path(__file__).resolve().parent.parent / "data" / "longform"
STATE = ("lesson.id", "lesson.step", "lesson.passed", "lesson.present")
NOT_SETTABLE = {"ui.lang", "lesson.id", "lesson.step", "lesson.passed", "lesson.present"}
# Bigger type for a projector: Streamlit sizes its text in rem, so the root size scales the page.
PRESENT_CSS = "<style>html{font-size:22px}[data-testid='stMainBlockContainer']{max-width:1200px}</style>"


def check_setting(key: str, value: Any) -> Any:
    """A lesson's setting as the app will hold it: what a link may carry (ui/links.py), checked the same way."""
    if key in NOT_SETTABLE or key not in links.LINKED:
        raise KeyError(key)
    if isinstance(value, (dict,)) or (isinstance(value, list) and not isinstance(links.LINKED[key], links.Many)):
        raise ValueError(value)
    return links.LINKED[key].parse(links.encode(value))


@functools.lru_cache(maxsize=1)
def catalog() -> tuple[dict[str, Lesson], tuple[tuple[str, LessonError], ...]]:
    """The lessons in RAG_LESSON_DIR (data/lessons/ unless set: the bundled ones, and any a teacher drops there), by id, and each file that does
    not read as a lesson with its error: one malformed file is listed with its line and field, and the others work
    (it broke every page of every session, its error only in the server's log)."""
    out: dict[str, Lesson] = {}
    broken: list[tuple[str, LessonError]] = []
    for path in sorted(links.lesson_dir().glob("*.toml")):
        try:
            lesson = read_upload(path.name, path.read_bytes())
        except LessonError as exc:
            broken.append((path.name, exc))
            continue
        except OSError as exc:  # unreadable (permissions), a folder named *.toml
            broken.append((path.name, LessonError(0, path.name, Msg(en=f"the file cannot be read ({type(exc).__name__})",
                                                                     zh=f"文件读不出来（{type(exc).__name__}）"))))
            continue
        out[lesson.id] = lesson
    return out, tuple(broken)


def bundled() -> dict[str, Lesson]:
    """The lessons in data/lessons/ that read, by id (the shipped ones never fail: tests/test_lessons.py reads them)."""
    return catalog()[0]


def read_upload(name: str, data: bytes) -> Lesson:
    """A lesson file a teacher uploaded; LessonError names the line and the field of what is wrong."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LessonError(0, name, Msg(en="the file is not UTF-8 text; save it as UTF-8 (a .toml file)",
                                         zh="文件不是 UTF-8 文本；请存成 UTF-8 的 .toml 文件")) from None
    return parse(text, check_setting, name)


def current(ss: MutableMapping) -> Lesson | None:
    lesson_id = ss.get("lesson.id") or ""
    uploaded = ss.get("lesson.uploaded")
    if uploaded is not None and ss.get("lesson.source") == "upload" and uploaded.id == lesson_id:
        return uploaded
    return bundled().get(lesson_id)


def step_index(ss: MutableMapping, lesson: Lesson) -> int:
    return min(max(int(ss.get("lesson.step") or 0), 0), len(lesson.steps) - 1)


# ------------------------------------------------------------------------------------------ entering a step
# These run as button callbacks: before the next run draws any widget, so they may set widget values.


def start(ss: MutableMapping, lesson: Lesson, source: str = "bundled") -> None:
    _undo(ss)
    if not ss.get("lesson.id"):  # the corpus before any lesson: given back on leaving
        ss["lesson.saved_corpus"] = (list(ss["corpus.docs"]), ss["corpus.name"], list(ss["corpus.files"]))
        ss["lesson.saved_kind"] = corpus_kind(ss)
    ss["lesson.source"] = source
    ss["lesson.id"] = lesson.id
    ss["lesson.passed"] = []
    ss["lesson.graded"] = {}
    _enter(ss, lesson, 0)


def go(ss: MutableMapping, i: int) -> None:
    lesson = current(ss)
    if lesson is not None:
        _enter(ss, lesson, min(max(i, 0), len(lesson.steps) - 1))


def leave(ss: MutableMapping) -> None:
    _undo(ss)
    ss["lesson.id"] = ""
    ss["lesson.present"] = False
    saved = ss.pop("lesson.saved_corpus", None)
    if saved is not None and corpus_kind(ss) != ss.get("lesson.saved_kind"):  # the corpus from before the lesson
        corpus.set_corpus(ss, *saved)


def _enter(ss: MutableMapping, lesson: Lesson, i: int) -> None:
    _undo(ss)
    step = lesson.steps[i]
    ss["lesson.step"] = i
    _use_corpus(ss, step.corpus or lesson.corpus)
    apply(ss, step.settings)
    ss["lesson.goto"] = step.page


def from_link(ss: MutableMapping, params) -> None:
    """A link to a bundled lesson's step (a teacher's "open step 5"): the settings of the steps up to it, except
    those the link itself sets, and the step's corpus, as if the student had walked there. Runs on a session's
    first run, before any widget."""
    lesson = current(ss)
    if lesson is None or "lesson.id" not in params:
        return
    ss["lesson.source"] = "bundled"
    ss["lesson.saved_corpus"] = (list(ss["corpus.docs"]), ss["corpus.name"], list(ss["corpus.files"]))
    ss["lesson.saved_kind"] = corpus_kind(ss)
    i = step_index(ss, lesson)
    merged: dict[str, Any] = {}
    for step in lesson.steps[: i + 1]:
        merged.update(step.settings)
    apply(ss, {k: v for k, v in merged.items() if k not in params})
    _use_corpus(ss, lesson.steps[i].corpus or lesson.corpus)


def apply(ss: MutableMapping, values: dict[str, Any]) -> None:
    """Set these settings as if the student had set them (a chunker's parameters rebuild the index, as Apply does)."""
    for key, value in values.items():
        ss[key] = value
    if any(k.startswith("chunk.") for k in values):
        method = ss["chunk.method"]
        ss["applied.chunk"] = (method, settings.pending_params(ss, method))
    if "embed.name" in values:
        ss["applied.embedder"] = values["embed.name"]


def corpus_kind(ss: MutableMapping) -> str:
    held = ss.get("corpus.kb")
    if held:
        return f"kb:{held[0]}"
    h = ss.get("corpus.hash")
    if h == corpus.corpus_hash(models.knowledge_base()):
        return "knowledge-base"
    if h == ss.get("lesson.longform_hash"):
        return "longform"
    return "upload"


def _use_corpus(ss: MutableMapping, kind: str) -> None:
    """Switch to the step's corpus; "upload" is the student's own documents from before the lesson (if any)."""
    now = corpus_kind(ss)
    if kind == now:
        return
    if kind == "knowledge-base":
        corpus.use_knowledge_base(ss)
    elif kind.startswith("kb:"):
        from . import kb

        try:
            kb.use(ss, kind[3:])
        except RagError as e:  # the step stops and says so (missing_kb)
            ss["lesson.kb_error"] = e
        else:
            ss.pop("lesson.kb_error", None)
    elif kind == "longform":
        corpus.apply_upload(ss, [(p.name, p.read_bytes()) for p in sorted(LONGFORM_DIR.iterdir()) if p.is_file()],
                            "replace")
        ss.pop("upload.base", None)
        ss["lesson.longform_hash"] = ss["corpus.hash"]
    elif ss.get("lesson.saved_kind") == "upload" and "lesson.saved_corpus" in ss:
        corpus.set_corpus(ss, *ss["lesson.saved_corpus"])


def missing_kb(ss: MutableMapping, lesson: Lesson, step: Step) -> str | None:
    """The class knowledge base the step is about when this session could not open it (not built on this server,
    or damaged); None when the step's corpus is no knowledge base or it is open."""
    kind = step.corpus or lesson.corpus
    if not kind.startswith("kb:") or corpus_kind(ss) == kind:
        return None
    return kind[3:]


def needs_upload(ss: MutableMapping, lesson: Lesson, step: Step) -> bool:
    """The step is about the student's own documents and the session has none: it must not run on the bundled FAQ
    as if it were them."""
    return (step.corpus or lesson.corpus) == "upload" and corpus_kind(ss) != "upload"


def _experiment(ss: MutableMapping, i: int, before: dict[str, str]) -> None:
    lesson = current(ss)
    e = lesson.steps[i].experiment if lesson is not None else None
    if e is None:
        return
    _undo(ss)
    ss["lesson.exp"] = {"step": i, "before": before, "undo": {k: ss.get(k) for k in e.set},
                        "applied": ss.get("applied.chunk")}
    apply(ss, e.set)


def _undo(ss: MutableMapping) -> None:
    exp = ss.pop("lesson.exp", None)
    if exp is not None:
        for key, value in exp["undo"].items():
            ss[key] = value
        if exp.get("applied") is not None:
            ss["applied.chunk"] = exp["applied"]


def follow(ss: MutableMapping) -> str | None:
    """The page a step just entered wants (app.py switches to it), once."""
    return ss.pop("lesson.goto", None)


# ------------------------------------------------------------------------------------------ the live run


def needed(step: Step) -> set[str]:
    """The stages the step's facts need."""
    import string

    names: set[str] = set()
    texts = [step.notice, step.check.ask if step.check else None]
    for text in filter(None, texts):
        for lg in ("zh", "en"):
            names |= {n for _lit, n, _s, _c in string.Formatter().parse(text.localized(lg)) if n}
    names |= {c.removeprefix("not ").strip() for c in step.expect}
    if step.experiment:
        names |= set(step.experiment.compare)
    if step.check:
        names.add(step.check.answer)
    return {F.FACTS[n].needs for n in names}


def live_run(ss: MutableMapping, lesson: Lesson, i: int, page: str) -> F.Run:
    """What this page run computed, for the step's facts (the memoised results the page itself used)."""
    step = lesson.steps[i]
    stages = needed(step) & set(PAGE_STAGES[page])
    q = settings.question(ss)
    index = indexing.get_index()
    run = F.Run(q, index, gold=lesson.gold_for(i), top_k=int(ss["rerank.top_k"]), rerank_on=bool(ss["rerank.enabled"]))
    if not q:
        return run
    from .choices import reranker_choice

    rr = reranker_choice(ss) if ss["rerank.enabled"] else None
    if "answer" in stages:
        run.trace = memo.peek("trace", results.trace_key(ss, rr))
    if stages & {"retrieval", "rerank", "answer"}:
        run.retrieval = results.retrieval_result(index, q, run.trace)
    if stages & {"rerank", "answer"} and rr is not None:
        run.rerank = results.rerank_result(index, q, rr, run.trace)
    if "pca" in stages:
        run.extra["pca"] = ss.get("embeddings.map")
    if "loops" in stages:
        run.extra["loops"] = ss.get("loops.done") or {}
    run.extra["my_sentence"] = ss.get("answer.my_sentence") or ""
    return run


def _shown(name: str, run: F.Run, lg: str) -> str:
    try:
        return F.shown(F.value(name, run), F.FACTS[name].kind, lg)
    except F.NotInRun as exc:
        return "— " + localized(exc.why, lg)


# ------------------------------------------------------------------------------------------ drawing


def page_title(page: str) -> str:
    return t(f"page.{page}")


AUTOMATIC = ("answer", "pca", "graph")  # stages a page computes by itself on every visit (loops wait for Run)


def fingerprint(ss: MutableMapping) -> tuple:
    """What the pages computed that a step's facts read: it changes when a page has computed something new."""
    index = ss.get("index.obj")
    return (ss.get("index.key"), id(index.graph if index is not None else None), id(ss.get("embeddings.map")),
            id(ss.get("answer.last_trace")), tuple((k, id(v)) for k, v in sorted((ss.get("loops.done") or {}).items())))


def waiting(run: F.Run, step: Step, page: str) -> bool:
    """The step's facts need a stage this page computes itself, and it has not yet (first visit, new settings)."""
    for stage in needed(step) & set(AUTOMATIC) & set(PAGE_STAGES[page]):
        if (stage == "answer" and run.trace is None) or (stage == "pca" and run.extra.get("pca") is None) \
                or (stage == "graph" and (run.index is None or run.index.graph is None)):
            return True
    return False


def draw(page: str) -> tuple | None:
    """The current step, if a lesson is on, drawn before the page runs. Returns the fingerprint of what it read
    when the step is on this page (app.py runs the script again if the page computed something new), else None."""
    ss = st.session_state
    lesson = current(ss)
    if lesson is None:
        return None
    i = step_index(ss, lesson)
    step = lesson.steps[i]
    lg = lang()
    present = bool(ss.get("lesson.present"))
    if present:
        st.html(PRESENT_CSS)
    seen = None
    with st.container(border=True, key="lesson-panel"):
        head, side = st.columns([5, 2])
        head.markdown(f":material/school: **{md_escape(lesson.title.localized(lg))}** · "
                      + tr(zh=f"第 {i + 1} / {len(lesson.steps)} 步", en=f"step {i + 1} of {len(lesson.steps)}"))
        head.subheader(md_escape(step.title.localized(lg)), anchor=False)
        side.toggle(tr(zh="投影模式", en="Projector view"), key="lesson.present",
                    help=tr(zh="字更大、侧栏收起、一次只看一步；键盘 ← → 翻步。", en="Larger type, the sidebar folded, one step "
                            "at a time; the ← and → keys turn the steps."))
        missing = missing_kb(ss, lesson, step)
        if missing is not None:
            _kb_missing_notice(ss, missing)
        elif needs_upload(ss, lesson, step):
            seen = fingerprint(ss)  # an upload on the page below reruns the script, and the step runs on it
            st.warning(tr(zh="这一课讲的是你自己的文档，但这个会话还没有上传文件。先在“上传”页上传你的文件（Markdown、PDF、"
                          "文本），再回到这一步；在那之前这一步不运行，免得把内置知识库当成你的文档。",
                          en="This lesson is about your own documents, and this session has no upload yet. Upload your "
                          "files on the Upload page (Markdown, PDF, text), then come back to this step; until then the "
                          "step does not run, so the bundled knowledge base is not taken for your documents."),
                       icon=":material/upload_file:")
            if page != "upload":
                st.button(tr(zh="去上传页", en="Go to the Upload page"), key="lesson.upload_btn", on_click=_goto,
                          args=("upload",), type="primary")
        elif step.page != page:
            st.info(tr(zh=f"这一步在“{page_title(step.page)}”页。", en=f"This step is on the {page_title(step.page)} page."),
                    icon=":material/arrow_forward:")
            st.button(tr(zh="去那一页", en="Go there"), key="lesson.goto_btn", on_click=_goto, args=(step.page,),
                      type="primary")
        else:
            seen = fingerprint(ss)  # if the page computes something new below, the step is drawn again from it
            try:
                run = live_run(ss, lesson, i, page)
                if waiting(run, step, page):
                    st.caption(":material/hourglass_top: " + tr(zh="这一步要看的内容正在下面的页面里计算，算好后这里会自动更新。",
                                                              en="What this step looks at is being computed on the page "
                                                              "below; this panel updates when it is done."))
                else:
                    _step_body(ss, lesson, i, step, run, lg)
            except RagError as exc:
                st.error(md_escape(error_text(exc)))
        _nav(ss, lesson, i, present)
    return seen


def _kb_missing_notice(ss: MutableMapping, name: str) -> None:
    """The step's class knowledge base is not open here: say so, and which command builds it."""
    st.warning(tr(zh=f"这一课用的是班级知识库 {md_escape(name)}，但这个会话打不开它，这一步先不运行。请老师在服务器上构建它："
                  f"`python -m rag kb build {name} 文件或文件夹`。",
                  en=f"This lesson uses the class knowledge base {md_escape(name)}, which this session cannot open, so "
                  f"the step does not run. The teacher builds it on the server: "
                  f"`python -m rag kb build {name} FILES_OR_FOLDERS`."), icon=":material/school:")
    why = ss.get("lesson.kb_error")
    if why is not None:
        st.caption(md_escape(error_text(why)))


def _goto(page: str) -> None:
    st.session_state["lesson.goto"] = page


def _step_body(ss, lesson: Lesson, i: int, step: Step, run: F.Run, lg: str) -> None:
    n = notice(step, run, lg)
    if n is not None and n.text is not None:
        st.info(md_escape(n.text), icon=":material/visibility:")
    elif n is not None:
        st.warning(tr(zh="这次运行没有显示这一步要讲的内容：", en="This run does not show what this step is about: ")
                   + md_escape("; ".join(n.missing) if lg == "en" else "；".join(n.missing))
                   + tr(zh="（问题、语料或设置和课程的不一样？提示是按现在屏幕上的运行算的。）",
                        en=" (Another question, corpus or settings than the lesson's? The notice is computed from the "
                        "run on the screen now.)"),
                   icon=":material/help:")
    if step.try_ is not None:
        st.caption(":material/lightbulb: " + md_escape(step.try_.localized(lg)))
    if step.experiment is not None:
        _experiment_box(ss, i, step.experiment, run, lg)
    if step.check is not None:
        _check_box(ss, lesson, i, step.check, run, lg)


def _experiment_box(ss, i: int, e: Experiment, run: F.Run, lg: str) -> None:
    exp = ss.get("lesson.exp")
    if exp is None or exp.get("step") != i:
        before = {name: _shown(name, run, lg) for name in e.compare}
        st.button(md_escape(e.label.localized(lg)), icon=":material/science:", key=f"lesson.exp.{i}",
                  on_click=_experiment, args=(ss, i, before))
        return
    rows = [{tr(zh="事实", en="fact"): localized(F.FACTS[name].means, lg), tr(zh="之前", en="before"): exp["before"].get(name, ""),
             tr(zh="现在", en="now"): _shown(name, run, lg)} for name in e.compare]
    st.markdown(f":material/science: **{md_escape(e.label.localized(lg))}**")
    import pandas as pd

    from .render import html_table

    st.html(html_table(pd.DataFrame(rows)))
    if not any(exp["before"].get(name, "") != _shown(name, run, lg) for name in e.point()):
        names = "、".join(localized(F.FACTS[n].means, "zh") for n in e.point()) if lg == "zh" else \
            "; ".join(localized(F.FACTS[n].means, "en") for n in e.point())
        why = e.unchanged.localized(lg) if e.unchanged is not None else ""
        st.info(md_escape(tr(zh=f"在这次运行里，这个实验没有改变：{names}。", en=f"In this run the experiment did not change: "
                             f"{names}. ") + why), icon=":material/info:")
    st.button(tr(zh="撤销这个实验", en="Undo the experiment"), icon=":material/undo:", key=f"lesson.undo.{i}",
              on_click=_undo, args=(ss,))


def _check_box(ss, lesson: Lesson, i: int, c: Check, run: F.Run, lg: str) -> None:
    ask, why = fill(c.ask.localized(lg), run, lg)
    kind = F.FACTS[c.answer].kind
    st.markdown(":material/quiz: **" + md_escape(ask if ask is not None else c.ask.localized(lg)) + "**")
    key = f"lesson.answer.{lesson.id}.{i}"
    given: float | str | None
    if kind == "number":
        given = st.number_input(tr(zh="你的答案", en="Your answer"), key=key, value=None, step=1.0, format="%g", label_visibility="collapsed",
                                placeholder=tr(zh="输入一个数", en="type a number"))
    else:
        opts = choices(c, run)
        given = st.radio(tr(zh="你的答案", en="Your answer"), opts, key=key, index=None, horizontal=len(opts) <= 6,
                         format_func=lambda o: F.option_shown(o, kind, lg), label_visibility="collapsed")
    graded = ss.setdefault("lesson.graded", {})
    if st.button(tr(zh="检查", en="Check"), key=f"lesson.check.{i}", icon=":material/done:", disabled=given is None):
        g = grade(c, run, given, lg)
        graded[(lesson.id, i)] = (g.correct, g.expected, g.why, given)
        passed = set(ss.get("lesson.passed") or [])
        if g.correct:
            passed.add(str(i))
        ss["lesson.passed"] = sorted(passed, key=int)
    result = graded.get((lesson.id, i))
    if result is None:
        return
    correct, expected, why_not, _given = result
    if correct is None:
        st.warning(tr(zh="这次运行给不出这道题的答案：", en="This run cannot give this check's answer: ") + md_escape(why_not),
                   icon=":material/help:")
    elif correct:
        st.success(tr(zh=f"对：{expected}。", en=f"Right: {expected}."), icon=":material/check_circle:")
    else:
        st.error(tr(zh="还不对，再看看页面。", en="Not yet; look at the page again."), icon=":material/cancel:")
        if c.hint is not None:
            st.caption(":material/tips_and_updates: " + md_escape(c.hint.localized(lg)))
        with st.expander(tr(zh="显示答案", en="Show the answer")):
            st.markdown(md_escape(expected))


def _nav(ss, lesson: Lesson, i: int, present: bool) -> None:
    passed = len(ss.get("lesson.passed") or [])
    checks = sum(1 for s in lesson.steps if s.check is not None)
    c1, c2, c3, c4 = st.columns([2, 2, 3, 2])
    c1.button(tr(zh="上一步", en="Previous"), icon=":material/arrow_back:", key="lesson.prev", disabled=i == 0,
              on_click=go, args=(ss, i - 1), shortcut="Left" if present else None)
    c2.button(tr(zh="下一步", en="Next"), icon=":material/arrow_forward:", key="lesson.next", type="primary",
              disabled=i >= len(lesson.steps) - 1, on_click=go, args=(ss, i + 1), shortcut="Right" if present else None)
    c3.caption(tr(zh=f"已答对 {passed} / {checks} 道题", en=f"{passed} of {checks} checks answered right"))
    c4.button(tr(zh="退出课程", en="Leave the lesson"), key="lesson.leave", on_click=leave, args=(ss,))


def home_panel() -> None:
    """The home page's lessons: the bundled ones first, then a teacher's own file."""
    ss = st.session_state
    lg = lang()
    for lesson in bundled().values():
        with st.container(border=True):
            st.markdown(f":material/school: **{md_escape(lesson.title.localized(lg))}** · "
                        + tr(zh=f"{len(lesson.steps)} 步", en=f"{len(lesson.steps)} steps")
                        + (tr(zh=f" · 约 {lesson.minutes} 分钟", en=f" · about {lesson.minutes} min") if lesson.minutes else ""))
            if lesson.summary:
                st.caption(md_escape(lesson.summary.localized(lg)))
            st.button(tr(zh="开始这一课", en="Start this lesson"), key=f"lesson.start.{lesson.id}", type="primary",
                      icon=":material/play_arrow:", on_click=start, args=(ss, lesson))
    for name, exc in catalog()[1]:
        st.error(md_escape(tr(zh=f"课程文件 {name} 读不出来，没有列出：", en=f"The lesson file {name} does not read, so it "
                              "is not listed: ") + exc.message(lg)), icon=":material/error:")
    with st.expander(tr(zh="老师：载入自己写的课程（.toml）", en="Teachers: load a lesson of your own (.toml)"),
                     icon=":material/upload_file:"):
        st.caption(tr(zh="课程文件的写法见 docs/lessons.md；它只在这个浏览器会话里有效。",
                      en="docs/lessons.md shows how to write one; it stays in this browser session only."))
        up = st.file_uploader(tr(zh="课程文件", en="Lesson file"), type=["toml"], key="lesson.file", max_upload_size=1)
        if up is not None:
            try:
                lesson = read_upload(up.name, up.getvalue())
            except LessonError as exc:
                st.error(md_escape(exc.message(lg)), icon=":material/error:")
            else:
                ss["lesson.uploaded"] = lesson
                st.success(tr(zh="读好了：", en="Read: ") + md_escape(lesson.title.localized(lg))
                           + tr(zh=f"（{len(lesson.steps)} 步）", en=f" ({len(lesson.steps)} steps)"))
                st.button(tr(zh="开始这一课", en="Start this lesson"), key="lesson.start.upload", type="primary",
                          on_click=start, args=(ss, lesson, "upload"))

