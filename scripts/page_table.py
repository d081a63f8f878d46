"""The README's table of the app's pages, made from the one page registry (app.py's PAGES) and each page's own
docstring, so the table cannot drift from the app: `python scripts/page_table.py` prints it, and a test checks
the README holds exactly this.
Not handled here: the pages themselves (app_pages/), their guides (docs/pages.md).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def registry() -> list[tuple[str, str]]:
    """(key, page file) in the order app.py registers them with st.Page."""
    tree = ast.parse((ROOT / "app.py").read_text("utf-8"))
    pages = next(n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES")
    return [(k.value, v.args[0].value) for k, v in zip(pages.keys, pages.values)]


def what_it_shows(path: str) -> str:
    """A page's docstring up to its first full stop, without the "Page n · Title:" head."""
    doc = " ".join((ast.get_docstring(ast.parse((ROOT / path).read_text("utf-8"))) or "").split())
    body = doc.split(":", 1)[1].strip() if ":" in doc.split(".")[0] else doc
    first = body.split(". ")[0].rstrip(".")
    return first[0].upper() + first[1:] if first else ""


def table() -> str:
    sys.path.insert(0, str(ROOT))
    from ui.i18n import LABELS

    rows = ["| page | what it shows | guide |", "|---|---|---|"]
    for key, path in registry():
        title = LABELS[f"page.{key}"].en
        rows.append(f"| {title} | {what_it_shows(path)} | [docs/pages.md](docs/pages.md#{key}) |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
