"""The citation audit as a student reads it: each sentence beside its evidence span, the words they share
marked in the span, every check with its verdict and reason in the UI's language, and the model's second
opinion where one ran.

Everything from the answer or the corpus is escaped (html.escape) before it goes into the table.
Not handled here: the checks themselves (rag/audit/support.py), the rest of the answer page (app_pages/5_answer.py).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from rag.messages import Msg
from rag.trace import AUDIT_LABELS, label_in

from .i18n import lang, tr

LABEL_COLOURS = {"supported": "#dcfce7", "weak": "#fef9c3", "unsupported": "#fee2e2", "contradicted": "#fecaca",
                 "restates-question": "#ede9fe", "no-citation": "#f1f5f9", "not-enough": "#e0f2fe"}
CHECK_NAMES = {"numbers": Msg(zh="数字", en="numbers"), "binding": Msg(zh="数字归属", en="binding"), "swap": Msg(zh="对象互换", en="swap"),
               "quantity": Msg(zh="数量所指", en="quantity"), "scope": Msg(zh="条件范围", en="scope"),
               "polarity": Msg(zh="否定/反义", en="polarity"), "new-term": Msg(zh="新名词", en="new term"), "new-number": Msg(zh="新数字", en="new number"),
               "restates": Msg(zh="复述问题", en="restates"), "coverage": Msg(zh="覆盖", en="coverage"), "opinion": Msg(zh="模型复核", en="second opinion"),
               "verbatim": Msg(zh="逐字抄录", en="verbatim"), "echo": Msg(zh="复述提示词", en="echoes the prompt"),
               "apart": Msg(zh="拼接", en="apart"), "bare": Msg(zh="孤立短语", en="bare phrase"), "adds": Msg(zh="问题之外", en="beyond the question"),
               "no-claim": Msg(zh="没有陈述", en="no claim"), "verifier": Msg(zh="学习型核对", en="learned verifier")}
LABEL_NAMES = {k: f"{m.zh} {k}" for k, m in AUDIT_LABELS.items()}  # one Chinese name a label (rag/trace.py)


def evidence_html(evidence) -> str:
    """The evidence span with the words it shares with the sentence in <mark>, its ref in front."""
    if evidence is None:
        return "<span style='color:#94a3b8'>—</span>"
    text, out, pos = evidence.text, [], 0
    for a, b in sorted(evidence.matched):
        if a < pos:
            continue
        out += [html.escape(text[pos:a]),
                f"<mark style='background:#fde68a;padding:0 1px;border-radius:2px'>{html.escape(text[a:b])}</mark>"]
        pos = b
    out.append(html.escape(text[pos:]))
    ref = (f"<span style='font-size:0.75em;background:#334155;color:white;border-radius:3px;padding:0 4px;"
           f"margin-right:4px'>{html.escape(evidence.ref)}</span>")
    return ref + "".join(out)


def checks_html(support) -> str:
    """One line per check: ✓ or ✗, its name and its reason, failed checks first."""
    if support is None:
        return "<span style='color:#94a3b8'>—</span>"
    ui = lang()
    rows = []
    for c in sorted(support.checks, key=lambda c: c.passed):
        mark, colour = ("✓", "#166534") if c.passed else ("✗", "#991b1b")
        name = CHECK_NAMES[c.name].localized(ui) if c.name in CHECK_NAMES else c.name
        rows.append(f"<div><span style='color:{colour};font-weight:600'>{mark}</span> "
                    f"<b>{html.escape(name)}</b>{'：' if ui == 'zh' else ': '}{html.escape(c.reason(ui))}</div>")
    return "".join(rows)


def uncited_detail(s, ui: str) -> str:
    """What the audit says of a sentence with no citation, all of it in the UI's language: the closest context and
    its label ("supported" sat in the Chinese text; issue 65, item 14)."""
    if not s.best_ref:
        return "未引用，也没有资料支撑" if ui == "zh" else "uncited, and no context supports it"
    best = label_in(s.best_label or "", ui)
    return f"未引用；最贴近的是 {s.best_ref}：{best}" if ui == "zh" else f"uncited; closest is {s.best_ref}: {best}"


def label_html(label: str, detail: str = "") -> str:
    name = LABEL_NAMES.get(label, label)
    shown = name.split(" ", 1)[0] if lang() == "zh" else name.split(" ", 1)[-1]
    extra = f"<div style='font-size:0.85em;color:#475569'>{html.escape(detail)}</div>" if detail else ""
    return (f"<span style='background:{LABEL_COLOURS.get(label, '#fff')};padding:1px 6px;border-radius:4px;"
            f"white-space:nowrap'>{html.escape(shown)}</span>{extra}")


def support_table_html(rows: Sequence[tuple[str, str, str, object]]) -> str:
    """rows: (sentence, label, detail, Support or None) -> a wrapping two-column table: the sentence with its
    label | the evidence span with the shared words marked, then every check with its reason. Two columns
    fit the half-width no-RAG side as well as the full-width audit."""
    head = [tr(zh="句子与判定", en="sentence and label"), tr(zh="证据片段（共有的词已标出）与各项检查", en="evidence span (shared words marked) and checks")]
    th = "".join(f"<th style='text-align:left;padding:6px 8px;border-bottom:1px solid #cbd5e1;font-weight:500;"
                 f"color:#475569'>{html.escape(h)}</th>" for h in head)
    td = "padding:6px 8px;border-bottom:1px solid #e2e8f0;vertical-align:top"
    body = []
    for sentence, label, detail, support in rows:
        evidence = getattr(support, "evidence", None)
        body.append(f"<tr><td style='{td};width:38%'>{html.escape(sentence)}<div style='margin-top:4px'>"
                    f"{label_html(label, detail)}</div></td>"
                    f"<td style='{td}'><div style='border-left:3px solid #cbd5e1;padding-left:8px;margin-bottom:4px'>"
                    f"{evidence_html(evidence)}</div><div style='font-size:0.92em'>{checks_html(support)}</div></td></tr>")
    return ("<table style='width:100%;border-collapse:collapse;font-size:0.9em;line-height:1.6;table-layout:fixed'>"
            f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>")
