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


OTHER_SCRIPT_SHARE = 0.3  # of a question's letters, from which another script is its language, not a symbol in it
CHINESE_CONTEXTS = 0.1  # the contexts' CJK share (detect_lang's measure) from which a Chinese question is theirs


def script_share(text: str, pattern: re.Pattern) -> float:
    """The share of `text`'s letters (CJK characters, Latin letters, other scripts' letters) that `pattern` matches."""
    letters = [ch for ch in text or "" if ch.isalpha()]
    return sum(1 for ch in letters if pattern.match(ch)) / len(letters) if letters else 0.0


def cjk_share(text: str) -> float:
    """CJK characters / (CJK characters + Latin words): detect_lang's measure, as a number."""
    cjk = len(_CJK.findall(text or ""))
    words = len(_LATIN_WORD.findall(text or ""))
    return cjk / (cjk + words) if cjk + words else 0.0


def other_language(question: str, texts: str) -> bool:
    """True only when `question` is written in a language `texts` are not:
    - another script makes up OTHER_SCRIPT_SHARE of the question's letters or more and the texts never use it (a
      Japanese question over Chinese chapters: its kana); a Greek letter in a Chinese question (动量的 β 取多少) is a
      symbol, not a language, and the texts write it as $\\beta$;
    - a Chinese question (detect_lang) over texts with almost no Chinese (under CHINESE_CONTEXTS of their words): a
      chapter whose code and formulas outnumber its Chinese words is still Chinese (a textbook's contexts with code
      read as English before, and the gate told a Chinese question "another language");
    - an English question over Chinese texts (detect_lang of the texts).
    Traditional and simplified Chinese are one language (one Unicode block). Word signals mean nothing across
    languages, so a check calibrated on same-language questions cannot decide for such a one."""
    for pattern in _OTHER_SCRIPTS.values():
        if script_share(question, pattern) >= OTHER_SCRIPT_SHARE and not pattern.search(texts):
            return True
    if detect_lang(question) == "zh":
        return cjk_share(texts) < CHINESE_CONTEXTS
    return detect_lang(texts) == "zh"
