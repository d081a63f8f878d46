"""The project's one bilingual text, Msg, where errors carry it (rag/errors.py)."""

from __future__ import annotations

from rag.messages import Msg


def test_the_errors_a_page_shows_in_its_language_hold_one_msg():
    """Issue 66, item 3: NothingToAsk, LoaderError and KnowledgeBaseError each kept their own `.zh` and a page found
    `localized` by getattr, and took (message, zh) in that order. Each is a Bilingual error made from one Msg (keywords,
    no order to get wrong): str is the English, localized the UI's."""
    from rag.errors import Bilingual, LoaderError, NothingToAsk
    from rag.index.kb import KnowledgeBaseError

    for exc, en, zh in ((NothingToAsk(Msg(en="no prose", zh="没有正文")), "no prose", "没有正文"),
                        (LoaderError("a.pdf", Msg(en="it is empty", zh="文件是空的")), "a.pdf: it is empty",
                         "a.pdf：文件是空的"),
                        (KnowledgeBaseError(Msg(en="rebuild it", zh="请重建")), "rebuild it", "请重建")):
        assert isinstance(exc, Bilingual) and isinstance(exc.text, Msg) and not hasattr(exc, "zh")
        assert str(exc) == en and exc.localized("en") == en and exc.localized("zh") == zh
