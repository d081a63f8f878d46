"""Which language a text is written in, as the pipeline needs it: "zh" or "en".

A Chinese character counts against a whole English word, so a mixed question such as
"RAG 的 chunk size 怎么选" reads as Chinese. The prompt, the query rewriter and the pipeline use it
to pick their wording.

`other_language` tells a question written in another language than its contexts (any script, by Unicode block).
Not handled here: naming languages other than Chinese and English (detect_lang reads them as "en" or "zh"),
script variants (Traditional and Simplified are both "zh").
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


# Scripts other than Han and Latin, by Unicode block: a question in one of them whose contexts hold none of it is
# written in another language than they are (Japanese kana against Chinese text, Arabic, Cyrillic, Hangul ...).
_OTHER_SCRIPTS = {
    "kana": re.compile("[\u3040-\u30ff\u31f0-\u31ff]"),
    "hangul": re.compile("[\u1100-\u11ff\uac00-\ud7af]"),
    "arabic": re.compile("[\u0600-\u06ff\u0750-\u077f]"),
    "cyrillic": re.compile("[\u0400-\u04ff]"),
    "greek": re.compile("[\u0370-\u03ff]"),
    "hebrew": re.compile("[\u0590-\u05ff]"),
    "devanagari": re.compile("[\u0900-\u097f]"),
    "thai": re.compile("[\u0e00-\u0e7f]"),
}


def other_language(question: str, texts: str) -> bool:
    """True when `question` is written in a language `texts` are not: a script of the question's that the texts
    never use, or Chinese against English (or English against Chinese) by detect_lang. Word-overlap signals mean
    nothing across languages, so a check calibrated on same-language questions cannot decide for such a one."""
    for pattern in _OTHER_SCRIPTS.values():
        if pattern.search(question) and not pattern.search(texts):
            return True
    return detect_lang(question) != detect_lang(texts)
