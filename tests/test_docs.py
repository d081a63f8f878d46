"""The README is the front door and docs/ holds the rest: every link in them resolves (the file, and the heading or
anchor it names), the README stays short, and its table of pages is the one the page registry makes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "data" / "README.md", ROOT / "bench" / "README.md",
        *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (but - and _), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text("utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.M)}
    return found | set(re.findall(r"<a id=\"([^\"]+)\"></a>", text))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(doc):
    text = re.sub(r"```.*?```", "", doc.read_text("utf-8"), flags=re.S)
    broken = []
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r"^[a-z]+://|^mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(target)
    assert not broken, broken


def test_the_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= 220
    assert lines.count("```bash") >= 2 and "bash scripts/test.sh" in lines  # the two commands, the second is CI's


def test_the_readme_lists_the_pages_the_app_registers():
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from page_table import table

    assert table() in (ROOT / "README.md").read_text("utf-8")
