"""The bundled knowledge base and golden set are well formed and consistent with each other."""

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def _jsonl(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_knowledge_base_has_about_fifty_unique_complete_entries():
    kb = _jsonl("faq.jsonl")
    assert 45 <= len(kb) <= 60
    assert len({r["id"] for r in kb}) == len(kb)
    for r in kb:
        assert r["title"].strip() and len(r["text"]) >= 80, r["id"]


def test_golden_set_points_at_real_entries_and_has_unanswerables():
    ids = {r["id"] for r in _jsonl("faq.jsonl")}
    golden = _jsonl("golden.jsonl")
    answerable = [g for g in golden if g["gold_ids"]]
    assert len(answerable) >= 50
    assert len([g for g in golden if not g["gold_ids"] and g.get("answerable") is False]) >= 10
    for g in answerable:
        assert set(g["gold_ids"]) <= ids, g
    kb_titles = {r["title"] for r in _jsonl("faq.jsonl")}
    assert not [g["query"] for g in answerable if g["query"] in kb_titles][6:], "questions should paraphrase"


def test_seed_questions_are_in_the_golden_set():
    queries = {g["query"] for g in _jsonl("golden.jsonl")}
    for q in ["什么是 RAG？", "为什么要做 chunking？", "BM25 和向量检索哪个好？", "Reranker 用在 RAG 的哪个阶段？", "怎么减少 LLM 的幻觉？"]:
        assert q in queries


def test_longform_answers_are_spans_of_their_gold_document_once():
    from pathlib import Path

    from rag.evaluate.evaluation import load_queries
    from rag.ingest.documents import load_path

    root = Path(__file__).resolve().parent.parent / "data"
    docs = {d.doc_id: d for p in sorted((root / "longform").iterdir()) for d in load_path(p)}
    assert {"handbook_zh", "lab_guide_zh", "cluster_guide_en"} <= set(docs)
    assert docs["cluster_guide_en"].metadata["pages"] == "3" and all(len(d.text) > 1900 for d in docs.values())
    queries = load_queries(root / "longform_golden.jsonl")
    from rag.evaluate.evaluation import normalise_space as norm
    kinds = {}
    for q in queries:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
        if q.gold_ids:
            (gold,) = q.gold_ids
            assert norm(docs[gold].text).count(norm(q.answer)) == 1, q.query_id
        else:
            assert not q.answer and q.kind == "unanswerable"
    assert kinds == {"table": 8, "boundary": 10, "heading": 6, "plain": 5, "unanswerable": 5}
