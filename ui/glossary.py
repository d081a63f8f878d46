"""The glossary: every technical term the pages use, defined once in both languages (data/glossary.toml), shown in
the sidebar for the page being read. Each entry names the pages that use it; tests/test_glossary.py renders every
page in both languages and fails when a page shows a term with no entry, or an entry lists a page that does not
show it, or no page shows an entry.
Not handled here: the terms' use on the pages (each page's own words)."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from rag.messages import Msg

from .i18n import lang, tr
from .render import md_escape

GLOSSARY = Path(__file__).resolve().parent.parent / "data" / "glossary.toml"


@dataclass(frozen=True)
class Term:
    term: str
    means: Msg  # the definition, in both languages
    pages: tuple[str, ...]
    aliases: tuple[str, ...] = ()  # other spellings the pages use (a Chinese name, a longer English one)


@functools.lru_cache(maxsize=1)
def terms() -> dict[str, Term]:
    raw = tomllib.loads(GLOSSARY.read_text(encoding="utf-8"))
    return {name: Term(name, Msg(en=e["en"], zh=e["zh"]), tuple(e["pages"]), tuple(e.get("aliases", [])))
            for name, e in raw["terms"].items()}


@functools.lru_cache(maxsize=1)
def not_terms() -> frozenset[str]:
    """Words that look like terms and are not (names of products and file types, units)."""
    return frozenset(tomllib.loads(GLOSSARY.read_text(encoding="utf-8")).get("not_terms", []))


def for_page(page: str) -> list[Term]:
    return sorted((x for x in terms().values() if page in x.pages), key=lambda x: x.term.lower())


def panel(page: str) -> None:
    """The sidebar's glossary for `page`."""
    found = for_page(page)
    if not found:
        return
    lg = lang()
    with st.expander(tr(zh=f"这一页的术语（{len(found)}）", en=f"Terms on this page ({len(found)})"), icon=":material/menu_book:"):
        for x in found:
            # the project's own text (data/glossary.toml), so its `code` spans are rendered
            st.markdown(f"**{md_escape(x.term)}** · {x.means.localized(lg)}")
