"""A lesson: an ordered walk through the pages, written as a TOML file a teacher can edit without code.

Why TOML: Python reads it with the standard library (tomllib), it has no indentation rules and no implicit
types (YAML reads `no` as false and `1.10` as 1.1), multi-line strings are plain triple quotes, and its syntax
errors carry a line number. docs/lessons.md shows a whole file; the shape is

    id = "my-lesson"                      # letters, digits, - and _
    title = { zh = "...", en = "..." }    # every text: a {zh, en} table, or one string for both languages
    summary = "..."                       # optional
    minutes = 15                          # optional
    corpus = "knowledge-base"             # or "longform" (the bundled long documents), "upload" (the student's own)
                                          # or "kb:NAME" (a class knowledge base: python -m rag kb build NAME ...)
    gold = "faq_030"                      # optional: the chunk that answers the lesson's question

    [[steps]]
    page = "retrieval"                    # a page of the app (PAGE_STAGES' keys)
    title = "..."
    settings = { question = "...", "retrieval.rrf_k" = 60 }   # applied when the step starts (optional)
    notice = "BM25 put {bm25_top} first"  # what to look at; {fact} fills from the live run (facts.py)
    expect = ["lists_disagree"]           # yes/no facts the notice relies on; "not x" for false (optional)
    try = "..."                           # what to try next (optional)
    [steps.experiment]                    # optional: one click changes settings and shows the difference
    label = "..."
    set = { "retrieval.rrf_k" = 1 }
    compare = ["hybrid_top", "hybrid_top_sum"]
    shows = ["hybrid_top"]                # optional: the compared facts whose change is the point
    unchanged = "..."                     # optional: why a run may not show it, said when none of `shows` changed
    [steps.check]                         # optional: a question graded from the run
    ask = "..."
    answer = "gold_best_retriever"        # the fact that is the right answer
    hint = "..."

Every problem is a `LessonError` naming the line and the field, and a lesson that loads can only ask for facts
that exist, on pages that compute them, with settings the app accepts (the caller's `check_setting`).
Not handled here: computing facts (facts.py), drawing a lesson (ui/lesson.py).
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from rag.index.kb import KnowledgeBaseError, check_name
from rag.lesson import facts as F
from rag.messages import Msg, localized

# page -> the stages a visit to that page computes (a fact needing another stage cannot be asked there)
_R = ("index", "retrieval")
PAGE_STAGES = {"home": ("index",), "upload": ("index",), "embeddings": (*_R, "pca"), "retrieval": _R,
               "graph": (*_R, "graph"), "rerank": (*_R, "rerank"), "answer": (*_R, "rerank", "answer"),
               "loops": (*_R, "rerank", "loops"), "evaluation": _R}
CORPORA = ("knowledge-base", "longform", "upload")  # the bundled FAQ, the bundled long documents, the student's own


def known_corpus(corpus: object) -> bool:
    """One of CORPORA, or "kb:NAME" with a name a knowledge base may have (rag/index/kb.py `check_name`)."""
    if corpus in CORPORA:
        return True
    if not isinstance(corpus, str) or not corpus.startswith("kb:"):
        return False
    try:
        check_name(corpus[3:])
    except KnowledgeBaseError:
        return False
    return True


def _corpus_error(corpus: object):
    return Msg(en=f"{corpus!r} is not one of {', '.join(CORPORA)} or kb:NAME (a class knowledge base)",
               zh=f"{corpus!r} 不是 {', '.join(CORPORA)} 之一，也不是 kb:名字（班级知识库）")
MAX_STEPS = 40
MAX_BYTES = 200_000
_ID = re.compile(r"^[A-Za-z0-9_-]{1,60}$")
_TOP = {"id", "title", "summary", "minutes", "corpus", "gold", "steps"}
_STEP = {"page", "title", "settings", "notice", "expect", "try", "experiment", "check", "gold", "corpus"}
_EXPERIMENT = {"label", "set", "compare", "shows", "unchanged"}
_CHECK = {"ask", "answer", "options", "hint"}


class LessonError(ValueError):
    """What is wrong with a lesson file, where: `line` (1-based, 0 if unknown) and `field` ("steps[3].page")."""

    def __init__(self, line: int, field: str, problem: Msg):
        self.line, self.field, self.problem = line, field, problem
        super().__init__(self.message("en"))

    def message(self, lang: str) -> str:
        whole = self.field.endswith(".toml")  # the file itself (not TOML, too big, not UTF-8): no field to name
        where = ((f"第 {self.line} 行，" if self.line else "") + ("文件" if whole else "字段") + f" {self.field}：") \
            if lang == "zh" else ((f"line {self.line}, " if self.line else "") + ("file" if whole else "field")
                                  + f" {self.field}: ")
        return where + localized(self.problem, lang)


@dataclass(frozen=True)
class Experiment:
    label: Msg
    set: dict[str, Any]
    compare: tuple[str, ...]
    shows: tuple[str, ...] = ()  # the compared facts whose change is the point (empty: any of `compare`)
    unchanged: Msg | None = None  # why this run may not show it: said when none of `shows` changed

    def point(self) -> tuple[str, ...]:
        return self.shows or self.compare


@dataclass(frozen=True)
class Check:
    ask: Msg
    answer: str  # a fact name
    options: tuple[str, ...] | None  # None: the fact kind's own options (facts.options)
    hint: Msg | None


@dataclass(frozen=True)
class Step:
    page: str
    title: Msg
    settings: dict[str, Any] = field(default_factory=dict)
    notice: Msg | None = None
    expect: tuple[str, ...] = ()
    try_: Msg | None = None
    experiment: Experiment | None = None
    check: Check | None = None
    gold: str | None = None
    corpus: str | None = None  # this step's corpus, when it is not the lesson's


@dataclass(frozen=True)
class Lesson:
    id: str
    title: Msg
    summary: Msg | None
    minutes: int | None
    corpus: str
    gold: str | None
    steps: tuple[Step, ...]

    def gold_for(self, i: int) -> str | None:
        return self.steps[i].gold or self.gold


# --------------------------------------------------------------------------------------------- finding lines


class _Lines:
    """Where a field is written: the line of `key =` (or `[steps.key]`) inside the n-th [[steps]] block."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.step_starts = [i for i, line in enumerate(self.lines) if re.match(r"^\s*\[\[\s*steps\s*\]\]", line)]

    def _range(self, step: int | None) -> tuple[int, int]:
        if step is None:
            return 0, (self.step_starts[0] if self.step_starts else len(self.lines))
        if step >= len(self.step_starts):
            return 0, 0
        end = self.step_starts[step + 1] if step + 1 < len(self.step_starts) else len(self.lines)
        return self.step_starts[step], end

    def at(self, key: str, step: int | None = None, table: str | None = None) -> int:
        """The line of field `key` in step `step`, written inside `[table]` when given."""
        return self.of(table, step, key) if table else self.of(key, step)

    def of(self, key: str, step: int | None = None, inner: str | None = None) -> int:
        lo, hi = self._range(step)
        pats = [re.compile(rf"^\s*\[\s*steps\s*\.\s*{re.escape(key)}\s*\]"),
                re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")]
        found = None
        for i in range(lo, hi):
            if any(p.search(self.lines[i]) for p in pats):
                found = i
                break
        if found is None:
            return lo + 1 if step is not None and hi > lo else 0
        if inner:  # a key inside this table (inline or its own section): its own line, else the table's
            for i in range(found, hi):
                if re.search(rf"[\"']?{re.escape(inner)}[\"']?\s*=", self.lines[i]):
                    return i + 1
        return found + 1


# --------------------------------------------------------------------------------------------- reading


def parse(text: str, check_setting: Callable[[str, Any], Any], name: str = "lesson") -> Lesson:
    """The lesson in `text` (TOML), checked; LessonError otherwise.

    `check_setting(key, value)` returns the value the app will use for a setting, and raises KeyError for a
    setting the app does not have or ValueError for a value it does not accept."""
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise LessonError(0, name, Msg(en=f"the file is over {MAX_BYTES // 1000} KB: a lesson is a page of text",
                                       zh=f"文件超过 {MAX_BYTES // 1000} KB：一个课程只是一页文字"))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        last = len(text.rstrip("\n").split("\n"))  # "at end of document": an unclosed quote or bracket
        raise LessonError(int(m.group(1)) if m else last if "end of document" in str(exc) else 0, name,
                          Msg(en=f"not valid TOML ({exc}); check quotes, brackets and '=' signs",
                              zh="不是有效的 TOML；检查这一行及其上方的引号、括号和等号")) from None
    lines = _Lines(text)
    _unknown(raw, _TOP, lines, None, "")
    lesson_id = _need(raw, "id", str, lines, None, "id")
    if not _ID.match(lesson_id):
        raise LessonError(lines.of("id"), "id", Msg(en="use 1-60 letters, digits, '-' or '_'", zh="只用 1-60 个字母、数字、- 或 _"))
    corpus = raw.get("corpus", "knowledge-base")
    if not known_corpus(corpus):
        raise LessonError(lines.of("corpus"), "corpus", _corpus_error(corpus))
    minutes = raw.get("minutes")
    if minutes is not None and (not isinstance(minutes, int) or isinstance(minutes, bool) or not 1 <= minutes <= 600):
        raise LessonError(lines.of("minutes"), "minutes", Msg(en="a whole number of minutes, 1-600", zh="分钟数：1-600 的整数"))
    gold = _opt(raw, "gold", str, lines, None, "gold")
    steps_raw = raw.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise LessonError(lines.of("steps"), "steps", Msg(en="a lesson needs at least one [[steps]] table",
                                                          zh="课程至少要有一个 [[steps]] 表"))
    if len(steps_raw) > MAX_STEPS:
        raise LessonError(lines.of("steps"), "steps", Msg(en=f"at most {MAX_STEPS} steps", zh=f"最多 {MAX_STEPS} 步"))
    steps = tuple(_step(s, i, lines, check_setting) for i, s in enumerate(steps_raw))
    return Lesson(lesson_id, _text(raw.get("title"), _Spot(lines, None, "title"), required=True),
                  _text(raw.get("summary"), _Spot(lines, None, "summary")), minutes, corpus, gold, steps)


def _need(raw: Mapping, key: str, kind: type, lines: _Lines, step: int | None, where: str):
    if key not in raw:
        raise LessonError(lines.of(key, step) or (lines.step_starts[step] + 1 if step is not None else 0), where,
                          Msg(en="this field is required", zh="必须填写这个字段"))
    return _opt(raw, key, kind, lines, step, where)


def _opt(raw: Mapping, key: str, kind: type, lines: _Lines, step: int | None, where: str):
    v = raw.get(key)
    if v is not None and not isinstance(v, kind):
        raise LessonError(lines.of(key, step), where, Msg(en=f"should be a {kind.__name__}", zh=f"应当是 {kind.__name__}"))
    return v


def _unknown(raw: Mapping, allowed: set, lines: _Lines, step: int | None, prefix: str, table: str | None = None):
    for key in raw:
        if key not in allowed:
            line = lines.at(key, step, table)
            raise LessonError(line, prefix + key, Msg(en=f"unknown field; the fields here are {', '.join(sorted(allowed))}",
                                                      zh=f"未知字段；这里可用的字段是 {', '.join(sorted(allowed))}"))


@dataclass(frozen=True)
class _Spot:
    """Where a field is written (for its error): `key` in step `step` (None: the lesson's head), inside `[table]`
    when given; `where` names it in the message (default: the key)."""

    lines: _Lines
    step: int | None
    key: str
    where: str = ""
    table: str | None = None

    @property
    def line(self) -> int:
        return self.lines.at(self.key, self.step, self.table)


@overload
def _text(v: Any, at: _Spot, required: Literal[True]) -> Msg: ...


@overload
def _text(v: Any, at: _Spot, required: bool = False) -> Msg | None: ...


def _text(v: Any, at: _Spot, required: bool = False) -> Msg | None:
    lines, step, where, line = at.lines, at.step, at.where or at.key, at.line
    if v is None:
        if required:
            raise LessonError(line or (lines.step_starts[step] + 1 if step is not None else 0), where,
                              Msg(en="this field is required", zh="必须填写这个字段"))
        return None
    if isinstance(v, str) and v.strip():
        return Msg(en=v, zh=v)
    if isinstance(v, dict) and set(v) <= {"zh", "en"} and all(isinstance(x, str) and x.strip() for x in v.values()) and v:
        return Msg(en=str(v.get("en", v.get("zh", ""))), zh=str(v.get("zh", v.get("en", ""))))
    raise LessonError(line, where, Msg(en='a text: "..." or { zh = "...", en = "..." }',
                                       zh='文字：写成 "..." 或 { zh = "...", en = "..." }'))


def _step(raw: Any, i: int, lines: _Lines, check_setting) -> Step:
    at = f"steps[{i + 1}]."
    if not isinstance(raw, dict):
        raise LessonError(lines.of("steps"), at[:-1], Msg(en="a step is a table", zh="一步是一个表"))
    _unknown(raw, _STEP, lines, i, at)
    page = _need(raw, "page", str, lines, i, at + "page")
    if page not in PAGE_STAGES:
        raise LessonError(lines.of("page", i), at + "page", Msg(en=f"unknown page {page!r}; the pages are "
                                                                f"{', '.join(PAGE_STAGES)}",
                                                                zh=f"没有 {page!r} 这个页面；页面有 {', '.join(PAGE_STAGES)}"))
    stage = PAGE_STAGES[page]
    settings = _settings(raw.get("settings"), lines, i, at + "settings", "settings", check_setting)
    notice = _text(raw.get("notice"), _Spot(lines, i, "notice", at + "notice"))
    if notice is not None:
        for lang in ("zh", "en"):
            _template(notice.localized(lang), stage, page, lines.of("notice", i), at + "notice")
    expect = raw.get("expect", [])
    if not isinstance(expect, list) or not all(isinstance(x, str) for x in expect):
        raise LessonError(lines.of("expect", i), at + "expect", Msg(en='a list of yes/no facts: ["lists_disagree"]',
                                                                   zh='一组是/否事实：["lists_disagree"]'))
    for cond in expect:
        name = cond.removeprefix("not ").strip()
        _fact_here(name, stage, page, lines.of("expect", i), at + "expect")
        if F.FACTS[name].kind != "yes-no":
            raise LessonError(lines.of("expect", i), at + "expect", Msg(en=f"{name} is not a yes/no fact",
                                                                         zh=f"{name} 不是是/否事实"))
    experiment = None
    if raw.get("experiment") is not None:
        e = raw["experiment"]
        if not isinstance(e, dict):
            raise LessonError(lines.of("experiment", i), at + "experiment", Msg(en="a table", zh="应当是一个表"))
        _unknown(e, _EXPERIMENT, lines, i, at + "experiment.", table="experiment")
        if not e.get("set"):
            raise LessonError(lines.of("experiment", i), at + "experiment.set",
                              Msg(en="an experiment changes at least one setting", zh="实验至少要改一个设置"))
        compare = e.get("compare", [])
        if not isinstance(compare, list) or not all(isinstance(x, str) for x in compare):
            raise LessonError(lines.of("experiment", i, "compare"), at + "experiment.compare",
                              Msg(en='a list of facts: ["hybrid_top"]', zh='一组事实：["hybrid_top"]'))
        for name in compare:
            _fact_here(name, stage, page, lines.of("experiment", i, "compare"), at + "experiment.compare")
        shows = e.get("shows", [])
        if not isinstance(shows, list) or not all(isinstance(x, str) and x in compare for x in shows):
            raise LessonError(lines.of("experiment", i, "shows"), at + "experiment.shows",
                              Msg(en="a list of facts from compare", zh="compare 里的一组事实"))
        experiment = Experiment(_text(e.get("label"), _Spot(lines, i, "label", at + "experiment.label", "experiment"), True),
                                _settings(e["set"], lines, i, at + "experiment.set", "experiment", check_setting),
                                tuple(compare), tuple(shows),
                                _text(e.get("unchanged"), _Spot(lines, i, "unchanged", at + "experiment.unchanged",
                                                                 "experiment")) if e.get("unchanged") is not None else None)
    check = None
    if raw.get("check") is not None:
        check = _check(raw["check"], lines, i, at + "check.", stage, page)
    gold = _opt(raw, "gold", str, lines, i, at + "gold")
    corpus = _opt(raw, "corpus", str, lines, i, at + "corpus")
    if corpus is not None and not known_corpus(corpus):
        raise LessonError(lines.of("corpus", i), at + "corpus", _corpus_error(corpus))
    return Step(page, _text(raw.get("title"), _Spot(lines, i, "title", at + "title"), True), settings, notice,
                tuple(expect), _text(raw.get("try"), _Spot(lines, i, "try", at + "try")), experiment, check, gold, corpus)


def _settings(raw: Any, lines: _Lines, i: int, where: str, table: str, check_setting) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise LessonError(lines.of(table, i), where, Msg(en='a table: { "retrieval.rrf_k" = 60 }',
                                                         zh='一个表：{ "retrieval.rrf_k" = 60 }'))
    out = {}
    for key, v in _flat(raw):
        line = lines.of(table, i, key.split(".")[-1])
        try:
            out[key] = check_setting(key, v)
        except KeyError:
            raise LessonError(line, f"{where}.{key}", Msg(en=f"the app has no setting {key!r} (docs/lessons.md lists them)",
                                                          zh=f"应用没有 {key!r} 这个设置（见 docs/lessons.md）")) from None
        except (ValueError, TypeError):
            raise LessonError(line, f"{where}.{key}", Msg(en=f"{v!r} is not a value {key} accepts",
                                                          zh=f"{v!r} 不是 {key} 可以取的值")) from None
    return out


def _flat(raw: Mapping, prefix: str = ""):
    """{"retrieval": {"rrf_k": 1}} (TOML's dotted keys without quotes) -> ("retrieval.rrf_k", 1)."""
    for k, v in raw.items():
        if isinstance(v, dict):
            yield from _flat(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def _fact_here(name: str, stage: tuple[str, ...], page: str, line: int, where: str) -> None:
    if name not in F.FACTS:
        raise LessonError(line, where, Msg(en=f"no fact named {name!r} (docs/lessons.md lists them)",
                                           zh=f"没有叫 {name!r} 的事实（见 docs/lessons.md）"))
    needs = F.FACTS[name].needs
    if needs not in stage:
        pages = ", ".join(p for p, stages in PAGE_STAGES.items() if needs in stages)
        raise LessonError(line, where, Msg(en=f"{name} needs the {needs} stage, which the {page} page does not run; put "
                                           f"this on a page that does ({pages})",
                                           zh=f"{name} 需要“{needs}”阶段，而 {page} 页不运行它；放到运行它的页面（{pages}）"))


def _template(text: str, stage: tuple[str, ...], page: str, line: int, where: str) -> None:
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise LessonError(line, where, Msg(en=f"a brace is not closed ({exc}); write {{{{ for a literal brace",
                                           zh=f"花括号没有配对（{exc}）；字面的花括号写成 {{{{")) from None
    for _lit, name, spec, conv in parts:
        if name is None:
            continue
        if conv or not name.isidentifier():
            raise LessonError(line, where, Msg(en=f"{{{name}}}: a placeholder is a fact's name, e.g. {{bm25_top}}",
                                               zh=f"{{{name}}}：占位符是事实的名字，例如 {{bm25_top}}"))
        _fact_here(name, stage, page, line, where)
        if spec and not re.fullmatch(r"\.?\d{0,2}[fdg%]?", spec):
            raise LessonError(line, where, Msg(en=f"{{{name}:{spec}}}: only number formats like :.2f",
                                               zh=f"{{{name}:{spec}}}：只支持 :.2f 这样的数字格式"))


def _check(raw: Any, lines: _Lines, i: int, at: str, stage: tuple[str, ...], page: str) -> Check:
    if not isinstance(raw, dict):
        raise LessonError(lines.of("check", i), at[:-1], Msg(en="a table", zh="应当是一个表"))
    _unknown(raw, _CHECK, lines, i, at, table="check")
    answer = raw.get("answer")
    line = lines.of("check", i, "answer")
    if not isinstance(answer, str):
        raise LessonError(line, at + "answer", Msg(en="the fact whose value is the right answer, e.g. \"bm25_top\"",
                                                   zh="哪个事实的值是正确答案，例如 \"bm25_top\""))
    _fact_here(answer, stage, page, line, at + "answer")
    kind = F.FACTS[answer].kind
    if kind not in F.CHECKABLE:
        raise LessonError(line, at + "answer", Msg(en=f"{answer} is free text, which cannot be graded; ask for a chunk, "
                                                   "a retriever, a number, a label, a stage or yes/no",
                                                   zh=f"{answer} 是自由文字，无法评分；请问块、检索器、数字、判定、阶段或是/否"))
    opts = raw.get("options")
    if opts is not None:
        if kind == "number" or not isinstance(opts, list) or len(opts) < 2 or not all(isinstance(x, str) for x in opts):
            raise LessonError(lines.of("check", i, "options"), at + "options",
                              Msg(en="options: a list of at least two choices (numbers are typed, not chosen)",
                                  zh="options：至少两个选项的列表（数字是输入的，不是选的）"))
        opts = tuple(opts)
    ask = _text(raw.get("ask"), _Spot(lines, i, "ask", at + "ask", "check"), True)
    for lang in ("zh", "en"):
        _template(ask.localized(lang), stage, page, lines.of("check", i, "ask"), at + "ask")
    return Check(ask, answer, opts,
                 _text(raw.get("hint"), _Spot(lines, i, "hint", at + "hint", "check")))


# --------------------------------------------------------------------------------------------- using them


@dataclass(frozen=True)
class Notice:
    """A step's notice for this run: the filled text, or why the run does not show what it expects."""

    text: str | None
    missing: list[str]  # reasons, in the UI language


def fill(template: str, run: F.Run, lang: str) -> tuple[str | None, list[str]]:
    """`template` with its {fact}s filled from the run, or (None, why not)."""
    values, missing = {}, []
    for _lit, name, _spec, _conv in string.Formatter().parse(template):
        if name and name not in values:
            try:
                values[name] = F.value(name, run)
            except F.NotInRun as exc:
                missing.append(localized(exc.why, lang))
    if missing:
        return None, missing
    return "".join(lit + (F.shown(values[name], F.FACTS[name].kind, lang, spec or "") if name else "")
                   for lit, name, spec, _conv in string.Formatter().parse(template)), []


def notice(step: Step, run: F.Run, lang: str) -> Notice | None:
    if step.notice is None:
        return None
    missing = []
    for cond in step.expect:
        name = cond.removeprefix("not ").strip()
        want = not cond.startswith("not ")
        try:
            got = F.value(name, run)
        except F.NotInRun as exc:
            missing.append(localized(exc.why, lang))
            continue
        if bool(got) != want:
            m = F.FACTS[name].means
            missing.append((f"这次运行里不成立：{m.zh}" if want else f"这次运行里成立了：{m.zh}") if lang == "zh" else
                           (f"not so in this run: {m}" if want else f"so in this run, which the step does not expect: {m}"))
    text, why = fill(step.notice.localized(lang), run, lang)
    missing += why
    if missing:
        return Notice(None, list(dict.fromkeys(missing)))
    return Notice(text, [])


@dataclass(frozen=True)
class Grade:
    correct: bool | None  # None: this run cannot give the answer (why)
    expected: str  # the right answer as shown, in the UI language ("" when it cannot be given)
    why: str = ""


def choices(check: Check, run: F.Run) -> list[str]:
    """What the student picks from (empty for a number, which is typed)."""
    kind = F.FACTS[check.answer].kind
    if kind == "number":
        return []
    opts = list(check.options) if check.options else F.options(kind, run)
    try:  # the run's answer is always offered, even when the lesson's list or the shown candidates miss it
        right = F.value(check.answer, run)
        for v in (sorted(right) if isinstance(right, frozenset) else [right]):
            v = ("yes" if v else "no") if isinstance(v, bool) else str(v)
            if v not in opts:
                opts.append(v)
    except F.NotInRun:
        pass
    return opts


def grade(check: Check, run: F.Run, answer: Any, lang: str) -> Grade:
    """Whether `answer` (a choice, or a number) is what this run shows."""
    f = F.FACTS[check.answer]
    try:
        right = F.value(check.answer, run)
    except F.NotInRun as exc:
        return Grade(None, "", localized(exc.why, lang))
    shown = F.shown(right, f.kind, lang)
    if f.kind == "number":
        try:
            given = float(answer)
        except (TypeError, ValueError):
            return Grade(False, shown)
        ok = abs(given - float(right)) < (0.0005 if isinstance(right, float) else 1e-9)
        return Grade(ok, shown if isinstance(right, int) else F.shown(right, f.kind, lang, ".3f"))
    if f.kind == "yes-no":
        return Grade((answer == "yes") == bool(right), shown)
    accepted = right if isinstance(right, frozenset) else {right}
    return Grade(answer in accepted, shown)
