"""How Self-RAG's decisions are read (rag/loops/decisions.py), chosen on cases written for the purpose.

    .venv/bin/python bench/choose_decisions.py                 # the bundled 0.5B
    .venv/bin/python bench/choose_decisions.py --model 1.5b

Three decisions, each read two ways from the model's next-token probabilities: raw, P(yes)/(P(yes)+P(no))
>= 0.5, and calibrated on content-free prompts (Zhao et al. 2021). The cases below were written here for
this choice, about the bundled FAQ's topics; none is in data/golden.jsonl, data/multihop.jsonl or
data/chitchat.jsonl, which report the chosen readings. Prints accuracy per decision and reading.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MESSAGES = [  # (message, needs facts?)
    ("你好", 0), ("谢谢你的帮助！", 0), ("早上好，今天天气不错", 0), ("你是谁？", 0), ("再见", 0), ("讲个笑话吧", 0),
    ("Hello!", 0), ("Thanks, that helps.", 0), ("Bye for now", 0),
    ("梯度消失是怎么回事？", 1), ("向量数据库怎么选？", 1), ("Adam 优化器的默认学习率是多少？", 1),
    ("怎样评估一个分类模型？", 1), ("What is a learning rate warmup?", 1), ("How do I split data for time series?", 1),
    ("公司年假有几天？", 1), ("dropout 的比例一般设多少", 1), ("RAG 和微调怎么选", 1),
]
PASSAGES = [  # (question, FAQ id, relevant?)
    ("梯度消失是怎么回事？", "faq_010", 1), ("梯度消失是怎么回事？", "faq_009", 1), ("梯度消失是怎么回事？", "faq_024", 0),
    ("梯度消失是怎么回事？", "faq_046", 0), ("向量数据库怎么选？", "faq_024", 1), ("向量数据库怎么选？", "faq_001", 0),
    ("向量数据库怎么选？", "faq_025", 1), ("向量数据库怎么选？", "faq_017", 0), ("LoRA 的秩一般取多少？", "faq_016", 1),
    ("LoRA 的秩一般取多少？", "faq_015", 0), ("LoRA 的秩一般取多少？", "faq_030", 0),
]
STATEMENTS = [  # (statement about faq_016, supported?)
    ("LoRA 的秩 r 通常只有 4 到 64。", 1), ("LoRA 冻结预训练模型的原始权重。", 1), ("LoRA 的秩通常取 1024。", 0),
    ("LoRA 需要更新所有权重。", 0), ("BM25 的 b 常取 0.75。", 0), ("QLoRA 把基座模型量化到 4 bit。", 1),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="0.5b")
    args = ap.parse_args()

    from rag.audit.checks.opinion import opinion_messages
    from rag.loops import decisions
    from rag.models.local_llm import LocalChat
    from rag.models.yes_no import YesNoRule, ask_yes_no

    chat = LocalChat(args.model, n_ctx=4096)
    faq = {json.loads(x)["id"]: json.loads(x) for x in (ROOT / "data" / "faq.jsonl").read_text("utf-8").splitlines()}
    rows = []

    def score(name, cases, raw_fn, cal_fn):
        raw = sum(raw_fn(*c[:-1]).answer == bool(c[-1]) for c in cases)
        cal = sum(cal_fn(*c[:-1]).answer == bool(c[-1]) for c in cases)
        rows.append((name, len(cases), raw, cal))

    need = decisions._need_messages
    score("needs retrieval? (labelled A/B)", MESSAGES,
          lambda m: ask_yes_no(chat, need(m), "en", "", YesNoRule(options=(("B",), ("A",)))),
          lambda m: ask_yes_no(chat, need(m), "en", "", YesNoRule(options=(("B",), ("A",)),
                                                                  null=[need(x) for x in decisions.CONTENT_FREE])))
    rel = decisions.relevance_messages
    text = lambda fid: faq[fid]["title"] + "\n" + faq[fid]["text"]  # noqa: E731
    score("is the chunk relevant?", PASSAGES,
          lambda q, fid: ask_yes_no(chat, rel(q, text(fid), "zh"), "zh", ""),
          lambda q, fid: ask_yes_no(chat, rel(q, text(fid), "zh"), "zh", "", YesNoRule(null=[rel(q, "N/A", "zh")])))
    ctx = faq["faq_016"]["text"]
    score("is the sentence supported?", STATEMENTS,
          lambda s: ask_yes_no(chat, opinion_messages(s, ctx, "zh"), "zh", ""),
          lambda s: ask_yes_no(chat, opinion_messages(s, ctx, "zh"), "zh", "",
                                 YesNoRule(null=[opinion_messages("N/A", ctx, "zh")])))
    print(f"model: {chat.label}\n")
    print("| decision | cases | raw P(yes) >= 0.5 | calibrated on content-free prompts |")
    print("|---|---|---|---|")
    for name, n, raw, cal in rows:
        print(f"| {name} | {n} | {raw}/{n} | {cal}/{n} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
