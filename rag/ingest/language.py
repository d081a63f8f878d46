"""Which language a text is written in, as the pipeline needs it: "zh" or "en".

A Chinese character counts against a whole English word, so a mixed question such as
"RAG 的 chunk size 怎么选" reads as Chinese. The prompt, the query rewriter and the pipeline use it
to pick their wording.

Not handled here: languages other than Chinese and English (they read as "en"), script variants
(Traditional and Simplified are both "zh").
"""

from __future__ import annotations

import re

_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def detect_lang(text: str, threshold: float = 0.3) -> str:
    """"zh" when CJK characters make up >= threshold of cjk_chars + latin_words, else "en".

    A Chinese character is counted against a whole English word (not a letter), so mixed questions like
    "RAG 的 chunk size 怎么选" read as Chinese. Text with neither (digits, emoji, empty) -> "zh", the app's default.
    """
    cjk = len(_CJK.findall(text or ""))
    words = len(_LATIN_WORD.findall(text or ""))
    if cjk + words == 0:
        return "zh"
    return "zh" if cjk / (cjk + words) >= threshold else "en"
