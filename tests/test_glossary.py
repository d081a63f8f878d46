"""The glossary is complete and true: every page is rendered in both languages (the answer and the loops run, as in
tests/test_languages.py) and its own words are read (headings, captions, notes, labels, table headers: not the
documents, the answers or the prompts). Every technical-looking term there (an acronym like RRF or BM25, a
mixed-case name like MaxSim or HyDE) must have an entry in data/glossary.toml or be listed there as not a term;
every entry must be shown by the pages it lists and by no page it does not list, and by at least one page.
Not handled here: the sidebar panel's drawing (tests/test_app.py)."""

from __future__ import annotations

import json
import re

import pytest

from tests.test_app import PAGES

TERMISH = re.compile(r"(?<![\w@./-])(?:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z]*)(?:-[A-Z][A-Za-z]*)?"
                     r"(?![\w@/])")
OWN = ("markdown", "caption", "info", "warning", "success", "error", "title", "header", "subheader")


def own_words(at) -> list[str]:
    """The page's own words: what the app wrote, not the corpus or a model (those are in html and text elements),
    and not the sidebar (the same on every page, with the glossary panel itself)."""
    main = at.main
    out = []
    for kind in OWN:
        out += [str(e.value) for e in main.get(kind)]
    out += [e.label for e in main.get("metric")] + [e.label for e in main.get("button")]
    for kind in ("radio", "selectbox", "multiselect", "slider", "toggle", "checkbox", "text_area", "text_input",
                 "number_input", "expander", "tab"):
        for e in main.get(kind):
            out.append(str(getattr(e, "label", "")))
            out.append(str(getattr(e, "help", "") or ""))
    for frame in main.get("dataframe"):
        out += [str(c) for c in frame.value.columns]
    return [re.sub(r"\\(.)", r"\1", x) for x in out]  # md_escape's backslashes


def shows(term, blobs: list[str]) -> bool:
    names = (term.term, *term.aliases)
    return any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", b) for n in names for b in blobs)


@pytest.fixture(scope="module")
def llm():
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def rendered(llm, cache_dir, app_test):
    """page -> the page's own words in both languages."""
    from tests.test_languages import every_page

    out: dict[str, list[str]] = {name: [] for name in PAGES}
    for lang in ("zh", "en"):
        for name, at in every_page(lang, llm):
            out[name] += own_words(at)
    return out


def test_every_term_a_page_shows_has_an_entry(rendered):
    from ui import glossary

    known = set(glossary.not_terms())
    for x in glossary.terms().values():
        known |= {x.term, *x.aliases}
    missing = {}
    for page, blobs in rendered.items():
        found = {m.group(0) for b in blobs for m in TERMISH.finditer(b)}
        new = sorted(t for t in found if t not in known)
        if new:
            missing[page] = new
    assert not missing, json.dumps(missing, ensure_ascii=False)


def test_every_entry_lists_exactly_the_pages_that_show_it(rendered):
    from ui import glossary

    wrong = {}
    for x in glossary.terms().values():
        on = sorted(p for p, blobs in rendered.items() if shows(x, blobs))
        if on != sorted(x.pages):
            wrong[x.term] = {"listed": sorted(x.pages), "shown on": on}
    assert not wrong, json.dumps(wrong, ensure_ascii=False)  # "shown on": [] is an entry nobody uses


def test_entries_are_in_both_languages():
    from ui import glossary

    for x in glossary.terms().values():
        assert re.search(r"[\u4e00-\u9fff]", x.means.zh), x.term
        assert not re.search(r"[\u4e00-\u9fff]", x.means.en), x.term
        assert set(x.pages) <= set(PAGES), x.term
