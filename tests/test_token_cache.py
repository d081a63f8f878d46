"""The jieba token cache (rag/index/token_cache.py): the tokens are jieba_tokenize's, a text seen before is
not tokenized again (memory; disk when asked), the worker pool gives the same tokens, and BM25 built from
cached tokens scores exactly like BM25 that tokenized itself."""

from __future__ import annotations

import numpy as np

from rag.index import token_cache
from rag.index.bm25 import BM25
from rag.index.tokenize import jieba_tokenize

TEXTS = ["检索增强生成先检索，再生成。", "BM25 用词频和逆文档频率打分", "混合检索 RRF 融合两个排名", "",
         "重复的文本", "重复的文本"]


def fresh_memory(monkeypatch):
    monkeypatch.setattr(token_cache, "_memory", token_cache.OrderedDict())


def test_tokens_are_jiebas_and_a_second_pass_tokenizes_nothing(monkeypatch):
    fresh_memory(monkeypatch)
    tokens, stats = token_cache.tokenize_many(TEXTS)
    assert tokens == [jieba_tokenize(t) for t in TEXTS]
    assert stats["tokenized"] == 5 and stats["memory"] == 0  # the repeated text once
    again, stats = token_cache.tokenize_many(TEXTS[::-1])
    assert again == tokens[::-1] and stats["tokenized"] == 0 and stats["memory"] == 5  # distinct texts


def test_disk_cache_survives_a_new_process_memory(monkeypatch, tmp_path):
    path = tmp_path / "tokens.sqlite"
    fresh_memory(monkeypatch)
    first, _ = token_cache.tokenize_many(TEXTS, persist=True, path=path)
    fresh_memory(monkeypatch)  # as a new process would start
    second, stats = token_cache.tokenize_many(TEXTS + ["新的一句话"], persist=True, path=path)
    assert second[:len(TEXTS)] == first and stats["disk"] == 5 and stats["tokenized"] == 1
    fresh_memory(monkeypatch)
    _, stats = token_cache.tokenize_many(TEXTS, persist=False, path=tmp_path / "never.sqlite")
    assert stats["tokenized"] == 5 and not (tmp_path / "never.sqlite").exists()  # the app's way: no disk


def test_worker_processes_give_the_same_tokens(monkeypatch):
    fresh_memory(monkeypatch)
    texts = [f"第 {i} 段：向量检索和关键词检索各有长处。" for i in range(40)]
    tokens, stats = token_cache.tokenize_many(texts, workers=2)
    assert stats["workers"] == 2 and tokens == [jieba_tokenize(t) for t in texts]


def test_bm25_from_cached_tokens_scores_like_bm25_that_tokenized(kb_index):
    texts = [c.text for c in kb_index.chunks]
    own = BM25().index(texts)
    for q in ["什么是重排？", "BM25 的 k1 参数", "向量数据库"]:
        a_rows, a_scores = own.search(q, 10)
        b_rows, b_scores = kb_index.bm25.search(q, 10)
        assert list(a_rows) == list(b_rows) and np.allclose(a_scores, b_scores)
    assert kb_index.token_stats is not None
