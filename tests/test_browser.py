"""The app in a real headless Chromium: `streamlit run app.py` as a subprocess, driven by Playwright.

What AppTest cannot see is checked here: the page actually renders in a browser (no exception box, no
"Traceback", charts drawn, the Chinese text set in a real font), the sidebar question box and the file
uploader work through real DOM events, and the answer streams into the page with clickable citation
markers. One Streamlit process runs keyless (the offline defaults: extractive generator); a second one
gets OPENAI_BASE_URL/OPENAI_API_KEY/OPENAI_MODEL pointing at the fake OpenAI-compatible server
(tests/fake_openai.py), whose canned answer cites one real ref and the made-up [faq_999].

Every page is saved as a full-page screenshot under test-artifacts/screenshots/<page>.png; with
RAG_UPDATE_DOCS_SCREENSHOTS=1 also as docs/screenshots/<nn>_<page>.png (the README's pictures).
Skipped when Chromium or Playwright is missing, except with CI=true, where that is a failure.
Run: `pytest -m browser tests/test_browser.py` (system Chromium at /usr/bin/chromium; never
`playwright install`, which downloads a browser).
Not handled here: per-widget behaviour (tests/test_app.py does that faster through AppTest).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fake_openai import HALLUCINATED_REF, FakeOpenAI, canned_answer
from ui.i18n import LABELS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
DOCS_SHOTS = ROOT / "docs" / "screenshots"
SAMPLE_MD = ROOT / "data" / "sample_docs" / "rag_intro.md"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 900}
MAX_SHOT_HEIGHT = 7000  # px: a taller page is cut here (keeps each PNG well under 1.5 MB)
HEALTH_TIMEOUT = 60  # s for the server to answer /_stcore/health
FIRST_RUN_MS = 240_000  # the first page loads the embedder and may embed the corpus (cold cache: ~50 s)
RUN_MS = 120_000  # any later rerun (the machine is slow and shared)
LLM_ENV_PREFIXES = ("OPENAI_", "RAG_LLM_")
QUESTION = "什么是重排？为什么需要它？"
TITLES = {name: LABELS[f"page.{name}"].zh for name in  # each page's header (Chinese-first UI, the default)
          ("upload", "embeddings", "retrieval", "graph", "rerank", "answer", "loops", "evaluation")}

# The docs pictures, in reading order: screenshot name -> file name under docs/screenshots/.
DOC_NAMES = {
    "home": "01_home", "upload": "02_upload", "embeddings": "03_embeddings", "retrieval": "04_retrieval",
    "rerank": "05_rerank", "answer": "06_answer", "answer_llm": "07_answer_llm", "evaluation": "08_evaluation",
    "graph": "09_graph", "evaluation_generated_zh": "16_testset",
}

SCRIPT_DONE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-testid="stStatusWidget"]')
      && !document.querySelector('[data-testid="stSkeleton"]');
}"""


# ------------------------------------------------------------------------------------ availability


def chromium_path() -> str | None:
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else shutil.which("chromium")


def require_browser() -> str:
    """The Chromium executable; skip (or, with CI=true, fail) when the browser or Playwright is missing."""
    missing = []
    path = chromium_path()
    if path is None:
        missing.append("no Chromium at /usr/bin/chromium or on PATH (apt-get install chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing.append("the playwright package is not installed (pip install playwright; the system Chromium is "
                       "used, no `playwright install` needed)")
    if missing:
        reason = "browser test needs: " + "; ".join(missing)
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: this test must run in CI)")
        pytest.skip(reason)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -------------------------------------------------------------------------------------- the server


class StreamlitServer:
    """`streamlit run app.py` on a free 127.0.0.1 port; its output goes to a log file under tmp."""

    def __init__(self, name: str, log_dir: Path, env: dict[str, str]):
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"streamlit-{name}.log"
        self.env = env
        self.proc: subprocess.Popen | None = None

    def start(self) -> "StreamlitServer":
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py",
               "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(self.port),
               "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none",  # no inotify watching of the tree (and .venv) while testing
               "--secrets.files", str(self.log_path.with_suffix(".no-secrets.toml"))]  # ignore a dev's secrets
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + HEALTH_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"streamlit ({self.name}) exited with {self.proc.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            time.sleep(0.3)
        pytest.fail(f"streamlit ({self.name}) not healthy after {HEALTH_TIMEOUT} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def app_env(cache_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(LLM_ENV_PREFIXES)}
    env.update(RAG_CACHE_DIR=str(cache_dir), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.update(extra or {})
    return env


@contextlib.contextmanager
def running(server: StreamlitServer, request):
    """Start the server; stop it afterwards, printing its log if a test that used it failed."""
    failed_before = request.session.testsfailed
    try:
        yield server.start()
    finally:
        server.stop()
        if request.session.testsfailed > failed_before:
            sys.__stderr__.write(f"\n----- streamlit ({server.name}) log tail -----\n{server.log_tail()}\n")


@pytest.fixture(scope="module")
def chromium():
    path = require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def offline_app(chromium, cache_dir, tmp_path_factory, request):
    """The app with no LLM configured (the keyless defaults). Shares the session's embedding cache."""
    server = StreamlitServer("offline", tmp_path_factory.mktemp("st-offline"), app_env(cache_dir))
    with running(server, request):
        yield server


@pytest.fixture(scope="module")
def fake_llm_server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(scope="module")
def llm_app(chromium, cache_dir, fake_llm_server, tmp_path_factory, request):
    """The app with OPENAI_* pointing at the fake OpenAI-compatible server."""
    env = app_env(cache_dir, {**fake_llm_server.env(), "RAG_GENERATOR": "auto"})  # auto: the endpoint answers
    server = StreamlitServer("llm", tmp_path_factory.mktemp("st-llm"), env)
    with running(server, request):
        yield server


@pytest.fixture
def session(chromium, offline_app):
    """A new browser session (its own context, so its own Streamlit session) for each test: no test
    depends on where an earlier one left the tab."""
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
    page = context.new_page()
    page.goto(offline_app.url + "/")
    settle(page, page.get_by_test_id("stPageLink"), FIRST_RUN_MS)
    yield page
    context.close()


# ------------------------------------------------------------------------------------- page helpers


def settle(page, ready, timeout_ms: int = RUN_MS) -> None:
    """Wait until `ready` (a locator that only the new run can produce) is visible and the script run
    has finished. On a timeout, save what the browser shows and fail with the page's text."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        if ready is not None:
            ready.first.wait_for(state="visible", timeout=timeout_ms)
        page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout_ms, polling=250)
        page.wait_for_timeout(300)  # a last rerun or a chart's first paint
        page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout_ms, polling=250)
    except PlaywrightTimeout as exc:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"timeout-{time.strftime('%H%M%S')}.png"
        page.screenshot(path=str(shot), full_page=True)
        body = re.sub(r"\s*\n\s*", "\n", page.locator("body").inner_text())[:3000]
        pytest.fail(f"page not ready within {timeout_ms / 1000:.0f} s waiting for {ready} ({exc}); screenshot "
                    f"{shot}; the page says:\n{body}")


def heading(page, text: str):
    """A page's own header, in the main area (the sidebar links and the home page's cards say it too)."""
    return page.get_by_test_id("stMain").get_by_test_id("stHeading").filter(has_text=text)


def open_page(page, name: str, timeout_ms: int = RUN_MS) -> None:
    """Click the sidebar link, as a user would (same browser session, so the index and the trace are
    kept), and wait for that page's header and the end of its run. Waiting for the header first matters:
    until the new run starts, the previous page is still on screen and the app reports it is not running."""
    page.locator(f'[data-testid="stSidebarNavLink"][href$="/{name}"]').click()
    settle(page, heading(page, TITLES[name]), timeout_ms)


def main_text(page) -> str:
    return page.get_by_test_id("stMain").inner_text()


def assert_clean(page, where: str) -> None:
    """No Streamlit exception box, no traceback, no error box."""
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, f"{where}: exception box: {exc.first.inner_text()[:1500]}"
    text = main_text(page)
    assert "Traceback" not in text, f"{where}: traceback on the page:\n{text[:2000]}"
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, f"{where}: error box: {errors.first.inner_text()[:500]}"


def metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has=page.get_by_test_id("stMetricLabel").get_by_text(label))
    return box.first.get_by_test_id("stMetricValue").inner_text().strip()


def plotly_drawn(page, n: int = 1, timeout_ms: int = 30_000) -> None:
    """`n` plotly charts on the page, each with its SVG drawn."""
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .main-svg').length >= n",
        arg=n, timeout=timeout_ms)


def shoot(page, name: str) -> Path:
    """Full-page screenshot. Streamlit scrolls inside its main block, not the window, so the viewport is
    grown to the content's height first (capped at MAX_SHOT_HEIGHT), then put back."""
    height = page.evaluate("""() => {
      const main = document.querySelector('[data-testid="stMain"]');
      const side = document.querySelector('[data-testid="stSidebarContent"]');
      return Math.max(main ? main.scrollHeight : 0, side ? side.scrollHeight : 0, window.innerHeight);
    }""")
    page.mouse.move(VIEWPORT["width"] // 2, 8)  # off the sidebar, whose hover state shows a collapse button
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 40, MAX_SHOT_HEIGHT)})
    page.wait_for_timeout(600)  # charts and data grids re-layout for the new size
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(VIEWPORT)
    if os.environ.get("RAG_UPDATE_DOCS_SCREENSHOTS") == "1" and name in DOC_NAMES:
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_SHOTS / f"{DOC_NAMES[name]}.png")
    return path


# ------------------------------------------------------------------------------- every page, keyless


def test_home(session):
    page = session
    assert_clean(page, "home")
    assert page.get_by_test_id("stPageLink").count() == 8  # one link per stage: pages 1-7 and the graph page
    table = page.get_by_test_id("stTable").inner_text()
    assert "multilingual-e5-small" in table and "learned ranker" in table
    assert "extractive" in table  # keyless: the labelled fallback generator
    assert page.locator(".st-key-question textarea").input_value().strip()  # the shared question
    cut = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stPageLink-NavLink"] span')]
        .filter(s => s.querySelector('[data-testid="stMarkdownContainer"]'))  // the label, not the icon
        .filter(s => s.scrollWidth > s.clientWidth + 1).map(s => s.innerText)""")
    assert cut == [], f"card link labels cut off: {cut}"  # e.g. "5. 回答与引用审计 Answer & audi…"
    shoot(page, "home")


def test_upload_page(session):
    page = session
    open_page(page, "upload", FIRST_RUN_MS)  # builds the index (cold cache: ~50 s)
    assert_clean(page, "upload")
    assert "索引就绪" in page.get_by_test_id("stAlertContentSuccess").last.inner_text()  # "Index ready"
    assert page.locator('.st-key-upload-files input[type="file"]').count() == 1
    assert metric(page, "块数 chunks") == "50"
    plotly_drawn(page)  # chunk-length histogram
    assert page.get_by_test_id("stDataFrame").count() >= 1  # the chunk table
    assert "faq_001" in page.get_by_test_id("stHtml").first.inner_text()  # the coloured preview's chunk tag
    shoot(page, "upload")


def test_embeddings_page(session):
    page = session
    open_page(page, "embeddings")
    assert_clean(page, "embeddings")
    plotly_drawn(page)
    points = page.locator("[data-testid='stPlotlyChart'] .scatterlayer .point")
    assert points.count() >= 50  # every chunk (50) plus the query
    assert metric(page, "PC1").endswith("%")
    shoot(page, "embeddings")


def test_retrieval_page(session):
    page = session
    open_page(page, "retrieval")
    assert_clean(page, "retrieval")
    assert page.get_by_test_id("stDataFrame").count() >= 2  # side by side + BM25 explain
    text = main_text(page)
    assert "jieba" in text and "rrf(d) = Σ" in text
    shoot(page, "retrieval")


def test_retrieval_page_shows_a_question_word_cut_again(chromium, offline_app):
    """A golden question whose word 调太大 the knowledge base never uses: the retrieval page says BM25 cut it into
    调 | 太大, in each language, and the BM25 table counts 太大."""
    question = "loss 一直来回震荡降不下去，是不是步长调太大了"
    for lang, note in (("zh", "BM25 按资料用到的词重新切开"), ("en", "cut again into words they do use")):
        context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
        page = context.new_page()
        try:
            page.goto(offline_app.url + "/retrieval" + ("?ui.lang=en" if lang == "en" else ""))
            settle(page, heading(page, TITLES["retrieval"] if lang == "zh" else "Retrieval"), FIRST_RUN_MS)
            box = page.locator(".st-key-question textarea")
            box.fill(question)
            box.press("Control+Enter")
            settle(page, page.get_by_test_id("stMain").get_by_text("调太大 → 调 | 太大"), RUN_MS)
            assert_clean(page, f"retrieval, a word cut again ({lang})")
            assert note in main_text(page)
            shoot(page, f"retrieval_recut_{lang}")
        finally:
            context.close()


def test_bm25_stopwords_switch(session):
    """On the upload page the stop-word box rebuilds BM25 at once; the retrieval page strikes the dropped
    tokens out. Switched off again at the end, so the later pages show the defaults."""
    page = session
    box = page.locator(".st-key-index-stopwords label")
    open_page(page, "upload")
    box.click()
    settle(page, page.get_by_test_id("stAlertContentSuccess").filter(has_text="停用词 开"))
    assert_clean(page, "upload (stop words on)")
    open_page(page, "retrieval")
    assert_clean(page, "retrieval (stop words on)")
    struck = page.get_by_test_id("stMain").locator("del").all_inner_texts()
    assert "的" in struck and "？" in struck and "rrf" not in struck  # dropped tokens, struck out
    assert "停用词已开启" in main_text(page)
    shoot(page, "retrieval_stopwords")
    open_page(page, "upload")
    box.click()
    settle(page, page.get_by_test_id("stAlertContentSuccess").filter(has_text="停用词 关"))


def test_graph_page_click_an_entity_to_see_its_sources(session):
    """The bundled KB's graph drawn from the shipped extractions; a click on a node in the plotly chart makes it
    the entity whose source chunks are shown."""
    page = session
    open_page(page, "graph")
    assert_clean(page, "graph")
    assert "随附的抽取结果" in page.get_by_test_id("stAlertContentSuccess").first.inner_text()
    plotly_drawn(page)
    entity = page.locator(".st-key-graph-entity input")
    before = entity.input_value()
    points = page.locator("[data-testid='stPlotlyChart'] .scatterlayer .trace").last.locator(".point")
    assert points.count() > 50
    point = points.nth(25)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # plotly reads the mouse, not the path
    page.wait_for_function("b => document.querySelector('.st-key-graph-entity input').value !== b", arg=before,
                           timeout=RUN_MS)
    settle(page, heading(page, TITLES["graph"]))
    assert_clean(page, "graph (after a click)")
    assert "提到它的块" in main_text(page)
    clicked = entity.input_value()
    # the picker is free again after the click: another entity picked there stays (it used to revert every time)
    wanted = "BM25" if clicked != "BM25" else "RRF"
    entity.click()
    entity.fill(wanted)
    page.keyboard.press("Enter")
    page.wait_for_function("w => document.querySelector('.st-key-graph-entity input').value === w", arg=wanted,
                           timeout=RUN_MS)
    settle(page, heading(page, TITLES["graph"]))
    page.wait_for_timeout(800)
    assert entity.input_value() == wanted != clicked
    shoot(page, "graph")


def test_rerank_page(session):
    page = session
    open_page(page, "rerank")
    assert_clean(page, "rerank")
    ran = page.get_by_test_id("stAlertContentSuccess").first.inner_text()
    assert "learned ranker" in ran and "不是交叉编码器" in ran  # the default reranker says what it is, in Chinese
    plotly_drawn(page)  # bump chart, the chosen candidate's contributions
    assert page.locator("[data-testid='stPlotlyChart'] .scatterlayer .trace").count() >= 1
    assert page.get_by_test_id("stDataFrame").count() >= 2  # before/after with reasons; one candidate's contributions
    assert "为什么这样排" in page.get_by_test_id("stHeading").all_inner_texts()[-1]  # why each chunk moved
    shoot(page, "rerank")


def test_loops_page_without_a_language_model(session):
    page = session
    open_page(page, "loops")
    assert_clean(page, "loops")
    warning = page.get_by_test_id("stAlertContentWarning").first.inner_text()
    assert "语言模型" in warning and "extractive" in warning  # what is missing, and what runs instead
    shoot(page, "loops_keyless")


def answer_markers(page):
    """(valid markers, hallucinated markers) in the rendered answer."""
    return (page.locator("[data-testid='stHtml'] a[href^='#ref-']"),
            # struck through on red; the compressed-context panel strikes through dropped sentences in grey
            page.locator("[data-testid='stHtml'] span[style*='line-through'][style*='#fee2e2']"))


def test_answer_page_offline_and_a_typed_question(session):
    page = session
    open_page(page, "answer")
    assert_clean(page, "answer")
    assert "extractive" in page.get_by_test_id("stAlertContentWarning").first.inner_text()
    valid, bad = answer_markers(page)
    assert valid.count() >= 1 and bad.count() == 0
    assert int(metric(page, "有效 valid")) >= 1 and metric(page, "幻觉 hallucinated") == "0"
    shoot(page, "answer")

    # A new question in the sidebar box: every page reruns with it; the answer page answers it.
    box = page.locator(".st-key-question textarea")
    box.fill(QUESTION)
    box.press("Control+Enter")
    prompt = page.locator("[data-testid='stHtml']", has_text=QUESTION)
    settle(page, prompt, RUN_MS)
    assert_clean(page, "answer (typed question)")
    valid, bad = answer_markers(page)
    assert valid.count() >= 1 and bad.count() == 0
    first_ref = valid.first.get_attribute("title")
    assert page.locator(f"#{valid.first.get_attribute('href')[1:]}").count() == 1  # the marker's target exists
    assert first_ref and first_ref in main_text(page)
    shoot(page, "answer_typed")


def test_evaluation_page_runs(session):
    page = session
    open_page(page, "evaluation")
    assert_clean(page, "evaluation")
    page.locator(".st-key-eval-run button").click()
    settle(page, page.locator("[data-testid='stPlotlyChart']"), RUN_MS)
    assert_clean(page, "evaluation (after run)")
    plotly_drawn(page)
    assert page.get_by_test_id("stDataFrame").count() >= 2  # strategies + per-query drill-down
    shoot(page, "evaluation")


def test_evaluation_page_generates_test_questions_from_an_uploaded_lecture(chromium, offline_app):
    """Upload a Markdown lecture, generate test questions from it on the evaluation page (keywords, no model),
    see them in the editable table with their near miss, and compare strategies on them: in both languages."""
    lecture = ROOT / "tests" / "fixtures" / "db_index_lecture.md"
    for lang, ready, source, made in (("zh", "索引就绪", "从当前语料生成", "道题（关键词，不用模型）"),
                                      ("en", "Index ready", "generate from this corpus", "questions (keywords, no model)")):
        context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
        try:
            page = context.new_page()
            page.goto(offline_app.url + "/upload" + ("?ui.lang=en" if lang == "en" else ""))
            settle(page, page.get_by_text(ready), FIRST_RUN_MS)
            page.locator('.st-key-upload-files input[type="file"]').set_input_files([str(lecture)])
            settle(page, page.get_by_text("db_index_lecture#1"), RUN_MS)
            page.locator('[data-testid="stSidebarNavLink"][href$="/evaluation"]').click()
            settle(page, heading(page, TITLES["evaluation"] if lang == "zh" else "Evaluation"), RUN_MS)
            page.get_by_text(source).first.click()
            settle(page, page.locator(".st-key-testset-go button"), RUN_MS)
            page.locator(".st-key-testset-go button").click()
            settle(page, page.get_by_text(made), RUN_MS)  # the summary over the table: N questions, kept, dropped
            assert_clean(page, f"evaluation, generated ({lang})")
            assert page.locator(".st-key-testset-recheck button").is_visible()  # the table is there to edit
            assert page.locator(".st-key-testset-download button").is_visible()
            page.locator(".st-key-eval-run button").click()
            settle(page, page.locator("[data-testid='stPlotlyChart']"), RUN_MS)
            assert_clean(page, f"evaluation, compared on generated questions ({lang})")
            assert "span MRR@10" in main_text(page)
            shoot(page, f"evaluation_generated_{lang}")
        finally:
            context.close()


# ------------------------------------------------------------------------------------------ upload


def test_upload_a_good_and_a_bad_file(chromium, offline_app, tmp_path):
    bad = tmp_path / "broken.txt"
    bad.write_bytes(bytes(range(256)) * 8)
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")  # a fresh session: its own corpus
    try:
        page = context.new_page()
        page.goto(offline_app.url + "/upload")
        settle(page, page.get_by_text("索引就绪"), FIRST_RUN_MS)
        page.locator('.st-key-upload-files input[type="file"]').set_input_files([str(SAMPLE_MD), str(bad)])
        settle(page, page.get_by_text("rag_intro#1"), RUN_MS)
        assert page.locator('[data-testid="stException"]').count() == 0
        error = page.get_by_test_id("stAlertContentError")
        assert error.count() == 1
        assert "broken.txt" in error.inner_text() and "二进制" in error.inner_text()  # the UI's language
        assert page.get_by_test_id("stAlertContentSuccess").first.is_visible()
        text = main_text(page)
        assert "rag_intro.md" in text and "Traceback" not in text
        preview = page.locator("[data-testid='stHtml']", has_text="rag_intro#1").first.inner_text()
        assert "rag_intro#2" in preview  # the markdown file was cut into several chunks
        shoot(page, "upload_files")
    finally:
        context.close()


LECTURE_COMMONMARK = """数据库讲义
==========

索引让查询不必扫描整张表。常见的索引有两种：

* 哈希索引
* B+ 树索引

第二部分：B+ 树
---------------

B+ 树的叶子节点按键的顺序相连，范围查询沿着叶子走即可，详见[课程主页][home]。

    SELECT * FROM t WHERE id BETWEEN 1 AND 9;

[home]: https://example.org/db
"""


def test_a_markdown_lecture_with_setext_headings_reads_as_its_renderer_shows_it(chromium, offline_app, tmp_path):
    """Issue 64, part 3: a lecture written with setext headings (a title over ====, a section over ----), a reference
    link, an indented code block and a list, uploaded in each language: the chunks carry the title path the headings give
    (the line-by-line reader read "数据库讲义 ==========" as a sentence, so the file had no title path and the page no
    "what a chunk reads as"), the underline is no chunk's text, and a list item reads with its marker. Screenshots: upload_commonmark_zh.png, _en.png."""
    lecture = tmp_path / "db_lecture.md"
    lecture.write_text(LECTURE_COMMONMARK, encoding="utf-8")
    for lang in ("zh", "en"):
        context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN" if lang == "zh" else "en-US")
        try:
            page = context.new_page()
            page.goto(offline_app.url + "/upload" + ("?ui.lang=en" if lang == "en" else ""))
            settle(page, page.get_by_text("索引就绪" if lang == "zh" else "Index ready"), FIRST_RUN_MS)
            page.locator('.st-key-upload-files input[type="file"]').set_input_files([str(lecture)])
            settle(page, page.get_by_text("db_lecture#1"), RUN_MS)
            assert_clean(page, f"upload (CommonMark lecture, {lang})")
            preview = page.locator("[data-testid='stHtml']", has_text="db_lecture#1").first.inner_text()
            assert "第二部分：B+ 树" in preview and "范围查询沿着叶子走即可" in preview  # the file as written
            page.get_by_text("一块读成什么" if lang == "zh" else "What a chunk reads as").click()
            read = page.get_by_test_id("stExpander").filter(has_text="一块读成什么" if lang == "zh" else "What a chunk reads as") \
                .get_by_test_id("stExpanderDetails").inner_text()  # the first chunk, as it reads
            assert "数据库讲义" in read and "索引让查询不必扫描整张表。" in read and "=====" not in read, read
            assert "- 哈希索引\n- B+ 树索引" in read, read  # a list item keeps its marker (as "- ")
            shoot(page, f"upload_commonmark_{lang}")
        finally:
            context.close()


def test_an_upload_stays_the_corpus_when_the_user_comes_back_to_the_upload_page(chromium, offline_app):
    """Upload a Markdown file, visit the retrieval page (which searches it), come back to the upload page through
    the sidebar: the uploader is drawn empty (Streamlit forgets it), but the corpus is still the file, and says so."""
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(offline_app.url + "/upload")
        settle(page, page.get_by_text("索引就绪"), FIRST_RUN_MS)
        page.locator('.st-key-upload-files input[type="file"]').set_input_files([str(SAMPLE_MD)])
        settle(page, page.get_by_text("rag_intro#1"), RUN_MS)
        open_page(page, "retrieval")
        assert "rag_intro" in main_text(page)  # it searched the upload
        open_page(page, "upload")
        assert_clean(page, "upload (back again)")
        text = main_text(page)
        assert "rag_intro.md" in text and "rag_intro#1" in text and "faq_001" not in text
        assert "当前语料仍是你上传的文件" in text
        open_page(page, "retrieval")
        assert "rag_intro" in main_text(page) and "faq_0" not in main_text(page)
    finally:
        context.close()


def test_the_loops_page_runs_graph_and_graph_global(chromium, llm_app):
    """Both GraphRAG strategies on the loops page, against the fake OpenAI-compatible server: no crash (a KeyError
    once), each with its timeline."""
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(llm_app.url + "/loops?loops.strategies=graph,graph-global")
        settle(page, heading(page, TITLES["loops"]), FIRST_RUN_MS)
        page.locator(".st-key-loops-run button").click()
        settle(page, page.get_by_text("时间线 Timeline"), RUN_MS)
        assert_clean(page, "loops (graph strategies)")
        tabs = page.get_by_role("tab").all_inner_texts()
        assert any("局部" in t for t in tabs) and any("全局" in t for t in tabs)
        shoot(page, "loops_graph")
    finally:
        context.close()


def test_the_loops_page_names_its_loops_in_both_languages(chromium, llm_app):
    """Issue 66, item 6: "strategy" is the retrieval meaning only; the loops page offers and compares answer loops
    (回答方式 / loop), in each language, with Self-RAG run on the fake endpoint."""
    for lang, picker, column in (("zh", "回答方式", "回答方式"), ("en", "Loops", "loop")):
        context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
        try:
            page = context.new_page()
            page.goto(llm_app.url + "/loops?loops.strategies=plain" + ("&ui.lang=en" if lang == "en" else ""))
            settle(page, heading(page, TITLES["loops"] if lang == "zh" else "Self-RAG & agent"), FIRST_RUN_MS)
            page.locator(".st-key-loops-run button").click()
            settle(page, page.locator("[data-testid='stHtml'] table"), RUN_MS)
            assert_clean(page, f"loops page ({lang})")
            text = main_text(page)
            assert picker in text and column in page.locator("[data-testid='stHtml'] table").first.inner_text()
            assert ("策略" not in text) if lang == "zh" else ("strateg" not in text.lower())
            shoot(page, f"loops_named_{lang}")
        finally:
            context.close()


def test_a_file_over_the_limit_and_an_unsupported_one_get_messages_not_red_chips(chromium, offline_app, tmp_path):
    """Through the browser's own file input: the widget lets both through (no type filter, a transfer cap
    above the limit), and the loader answers in Chinese; the bundled corpus stays loaded."""
    from rag.ingest.documents import MAX_FILE_BYTES, MAX_FILE_MB

    big = tmp_path / "huge.txt"
    big.write_bytes(b"a" * (MAX_FILE_BYTES + 1024))
    odd = tmp_path / "slides.pptx"
    odd.write_bytes(b"not really slides")
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(offline_app.url + "/upload")
        settle(page, page.get_by_text("索引就绪"), FIRST_RUN_MS)
        assert f"每个文件最多 {MAX_FILE_MB} MB" in main_text(page)
        assert page.get_by_test_id("stFileUploaderDropzoneInstructions").is_hidden()  # its English cap line
        page.locator('.st-key-upload-files input[type="file"]').set_input_files([str(big), str(odd)])
        settle(page, page.get_by_test_id("stAlertContentError").nth(1), RUN_MS)
        errors = [e.inner_text() for e in page.get_by_test_id("stAlertContentError").all()]
        assert len(errors) == 2, errors
        assert any("huge.txt" in e and f"{MAX_FILE_MB} MB 的上限" in e for e in errors), errors
        assert any("slides.pptx" in e and "不支持" in e for e in errors), errors
        assert page.locator('[data-testid="stException"]').count() == 0
        assert "知识库" in main_text(page) or "knowledge base" in main_text(page)  # the corpus before is kept
        shoot(page, "upload_too_big")
    finally:
        context.close()


def test_a_quote_in_a_file_name_and_a_name_too_long_to_upload(chromium, offline_app):
    """A `"` reaches the server as %22 (Chromium's form encoding): the page shows the name as given. A name of
    4,200 characters is refused by the upload server before the app sees it (a red chip): the caption under
    the uploader is what says why, and the corpus is kept."""
    from ui.render import NAME_MAX_BYTES

    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(offline_app.url + "/upload")
        settle(page, page.get_by_text("索引就绪"), FIRST_RUN_MS)
        assert f"文件名最长约 {NAME_MAX_BYTES} 字节" in main_text(page) and "请先改短文件名" in main_text(page)
        uploader = page.locator('.st-key-upload-files input[type="file"]')
        uploader.set_input_files([{"name": 'say "hi".txt', "mimeType": "text/plain",
                                   "buffer": "引号文件的内容。".encode()}])
        settle(page, page.get_by_text('say "hi".txt · 1 篇文档'), RUN_MS)
        assert "%22" not in main_text(page)
        uploader.set_input_files([{"name": "a" * 4200 + ".txt", "mimeType": "text/plain",
                                   "buffer": "长名字文件。".encode()}])
        page.wait_for_timeout(4000)  # the refusal happens in the browser and the upload server: nothing to wait on
        assert page.locator('[data-testid="stException"]').count() == 0
        assert 'say "hi".txt · 1 篇文档' in main_text(page)  # the corpus before is kept
        assert "a" * 100 not in main_text(page)  # the long file never became a document
        shoot(page, "upload_names")
    finally:
        context.close()


# ------------------------------------------------------------------------------------ with the LLM


def test_answer_page_with_the_fake_llm(chromium, llm_app, fake_llm_server):
    context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(llm_app.url + "/answer")
        settle(page, page.locator("[data-testid='stHtml'] a[href^='#ref-']"), FIRST_RUN_MS)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert "Traceback" not in main_text(page)
        assert "fake-model" in page.get_by_test_id("stAlertContentSuccess").first.inner_text()
        valid, bad = answer_markers(page)
        assert valid.count() >= 1 and bad.count() == 0  # the made-up ref's sentence is not in the answer shown...
        assert metric(page, "模型写的：幻觉 hallucinated") == "1"  # ...and the audit of what the model wrote has it
        assert f"[{HALLUCINATED_REF}]" in main_text(page)
        chats = fake_llm_server.chat_requests
        assert chats, "the app never called the LLM"
        assert any(valid.first.get_attribute("title") in c.prompt_text for c in chats)  # cited ref came from the prompt
        assert all(c.headers.get("authorization") == "Bearer sk-fake-test-key" for c in chats)
        shoot(page, "answer_llm")
    finally:
        context.close()


def test_a_bare_answer_off_the_question_is_named_in_both_languages(chromium, llm_app, fake_llm_server):
    """The model answers "RRF 的 k 通常取多少？" with "向量检索。", a phrase its cited entry holds only in another sentence
    (the example of a ranking): the audit of what the model wrote names the failed check, 孤立短语 / bare phrase, in
    the page's language, and the answer does not show the phrase as supported."""
    from urllib.parse import quote

    def bare_reply(body: dict) -> str:
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        return "向量检索。[faq_030]" if "faq_030" in text else canned_answer(body)

    fake_llm_server.default_content = bare_reply
    try:
        for lang, name in (("zh", "孤立短语"), ("en", "bare phrase")):
            context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
            try:
                page = context.new_page()
                page.goto(f"{llm_app.url}/answer?question={quote('RRF 的 k 通常取多少？')}&ui.lang={lang}")
                settle(page, page.locator("[data-testid='stHtml'] a[href^='#ref-']"), FIRST_RUN_MS)
                assert_clean(page, f"answer with a bare phrase ({lang})")
                page.get_by_text(name).first.wait_for(state="visible", timeout=RUN_MS)
                assert name in main_text(page)  # the model's sentence, audited as written, with the check that failed
                shoot(page, f"answer_bare_{lang}")
            finally:
                context.close()
    finally:
        fake_llm_server.default_content = None


# ---------------------------------------------------------------------------- a class knowledge base, by link

def test_a_link_to_a_class_knowledge_base_lands_on_it_in_both_languages(chromium, cache_dir, embedder,
                                                                         tmp_path_factory, request):
    """The teacher built `course` on the server; a student's first visit on `?kb=course` shows it as the corpus
    on the upload page and the answer page answers from its files (issue 56), in Chinese and in English."""
    from urllib.parse import quote

    from rag.index import kb

    kb_dir, folder = tmp_path_factory.mktemp("kbs"), tmp_path_factory.mktemp("course_files")
    (folder / "hash_map.md").write_text("# 哈希表\n\n哈希表通过哈希函数把键映射到桶。\n\n## 哈希冲突\n\n两个不同的键映射到同一个"
                                        "桶，叫作哈希冲突；链式地址法在每个桶里放一个链表来解决它。\n", encoding="utf-8")
    (folder / "quick_sort.md").write_text("# 快速排序\n\n快速排序选一个基准数，把小的放左边、大的放右边，再递归。\n",
                                          encoding="utf-8")
    kb.build("course", [folder], embedder=embedder, base=kb_dir)
    env = app_env(cache_dir, {"RAG_KB_DIR": str(kb_dir), "RAG_GENERATOR": "extractive"})
    with running(StreamlitServer("kb", tmp_path_factory.mktemp("st-kb"), env), request) as server:
        for lang, needle in (("zh", "班级知识库 course"), ("en", "class knowledge base course")):
            context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
            page = context.new_page()
            page.goto(f"{server.url}/upload?kb=course&question={quote('哈希冲突是什么？')}&ui.lang={lang}")
            settle(page, heading(page, "Upload & chunks"), FIRST_RUN_MS)
            assert_clean(page, f"upload on ?kb=course ({lang})")
            assert needle in main_text(page)
            page.locator('[data-testid="stSidebarNavLink"][href$="/answer"]').click()
            settle(page, heading(page, "Answer & audit"), RUN_MS)
            assert_clean(page, f"answer on ?kb=course ({lang})")
            valid, bad = answer_markers(page)
            assert valid.count() >= 1 and bad.count() == 0
            assert all((valid.nth(i).get_attribute("title") or "").startswith(("hash_map", "quick_sort"))
                       for i in range(valid.count()))
            assert "kb=course" in page.url
            shoot(page, f"kb_answer_{lang}")
            context.close()


def test_a_link_whose_knowledge_base_cannot_be_opened_says_so_where_it_lands(chromium, cache_dir, tmp_path_factory,
                                                                               request):
    """Issue 65, item 1, in a browser: `?kb=missing` and a 5,000-character value land on the home page with the
    failure said there, in either language, the long value cut; the answer page runs on no other corpus; kb= stays
    in the address; the student's button goes on with the bundled corpus."""
    kb_dir = tmp_path_factory.mktemp("kbs-none")
    env = app_env(cache_dir, {"RAG_KB_DIR": str(kb_dir), "RAG_GENERATOR": "extractive"})
    with running(StreamlitServer("kb-missing", tmp_path_factory.mktemp("st-kb-missing"), env), request) as server:
        for lang, value, said in (("zh", "missing", "打不开"), ("en", "z" * 5000, "cannot be opened")):
            context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
            page = context.new_page()
            page.goto(f"{server.url}/?kb={value}&ui.lang={lang}")
            alert = page.locator('[data-testid="stAlertContentError"]').filter(has_text=said)
            settle(page, alert, FIRST_RUN_MS)
            text = alert.first.inner_text()
            assert value[:64] in text and len(text) < 1200
            assert ("5,000 characters" in text) if lang == "en" else ("characters" not in text)
            assert f"kb={value[:20]}" in page.url
            shoot(page, f"kb_link_failed_home_{lang}")
            page.locator('[data-testid="stSidebarNavLink"][href$="/answer"]').click()
            settle(page, page.locator('[data-testid="stAlertContentError"]').filter(has_text=said), RUN_MS)
            assert answer_markers(page)[0].count() == 0  # no answer ran on another corpus
            shoot(page, f"kb_link_failed_answer_{lang}")
            button = "先用内置示例语料" if lang == "zh" else "Go on with the bundled example corpus"
            page.get_by_role("button", name=button).click()
            settle(page, heading(page, "Answer & audit"), FIRST_RUN_MS)
            assert_clean(page, f"answer after leaving the failed link ({lang})")
            assert "kb=" not in page.url
            context.close()


def test_a_malformed_lesson_file_is_listed_with_its_error_and_the_others_start(chromium, cache_dir, tmp_path_factory,
                                                                                request):
    """Issue 65, item 9, in a browser: a teacher's lesson folder (RAG_LESSON_DIR) with one file that is not TOML. The
    home page lists that file and why, in either language; the other lessons are listed and one starts."""

    folder = tmp_path_factory.mktemp("lessons")
    for path in (ROOT / "data" / "lessons").glob("*.toml"):
        shutil.copy(path, folder / path.name)
    (folder / "zz_broken.toml").write_text('id = "broken"\ntitle = [\n', encoding="utf-8")
    env = app_env(cache_dir, {"RAG_LESSON_DIR": str(folder), "RAG_GENERATOR": "extractive"})
    with running(StreamlitServer("lessons", tmp_path_factory.mktemp("st-lessons"), env), request) as server:
        for lang, said, start in (("zh", "读不出来", "开始这一课"), ("en", "does not read", "Start this lesson")):
            context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
            page = context.new_page()
            page.goto(f"{server.url}/?ui.lang={lang}")
            alert = page.locator('[data-testid="stAlertContentError"]').filter(has_text="zz_broken.toml")
            settle(page, alert, FIRST_RUN_MS)
            text = alert.first.inner_text()
            assert said in text and "TOML" in text, text
            shoot(page, f"lesson_broken_home_{lang}")
            buttons = page.get_by_role("button", name=start)
            assert buttons.count() == 2  # the two bundled lessons still listed
            buttons.first.click()
            settle(page, page.get_by_text("第 1 /" if lang == "zh" else "step 1 of").first, RUN_MS)
            assert page.locator('[data-testid="stException"]').count() == 0 and "Traceback" not in main_text(page)
            errors = page.locator('[data-testid="stAlertContentError"]')
            assert errors.count() == 1 and "zz_broken.toml" in errors.first.inner_text()  # the listing, nothing else
            shoot(page, f"lesson_broken_started_{lang}")
            context.close()


# ------------------------------------------------------------------ a PDF's regions; the gate and the leading quote

def test_a_pdf_upload_shows_the_regions_the_reader_found_in_both_languages(chromium, offline_app, tmp_path):
    """A PDF with a running header and footer and a margin note (made here, tests/test_pdf_layout.py): the upload
    page's region view draws the page with its regions and lists each line's region, in Chinese and in English."""
    from tests.test_pdf_layout import BODY, ZH, make_pdf, paragraph, wrapped

    def draw(c, n):
        c.setFont(ZH, 9)
        c.drawString(60, 810, f"第 6 章 循环神经网络 {100 + n}")
        c.drawString(60, 30, "邱锡鹏：《神经网络与深度学习》")
        paragraph(c, wrapped(BODY[(n - 1) % 4] + BODY[n % 4]))
        c.setFont(ZH, 7)
        c.drawString(470, 760, "R e L U 神 经 元")

    pdf = tmp_path / "rnn_notes.pdf"
    pdf.write_bytes(make_pdf(draw, pages=3))
    for lang, ready, view, region in (("zh", "索引就绪", "这份 PDF 是怎么读的", "页眉（不计入）"),
                                      ("en", "Index ready", "How this PDF was read", "running header (left out)")):
        context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
        try:
            page = context.new_page()
            page.goto(offline_app.url + "/upload" + ("?ui.lang=en" if lang == "en" else ""))
            settle(page, page.get_by_text(ready), FIRST_RUN_MS)
            page.locator('.st-key-upload-files input[type="file"]').set_input_files([str(pdf)])
            settle(page, page.get_by_text(view), RUN_MS)  # the view is offered for a PDF read as a layout
            page.get_by_text(view).first.click()
            settle(page, page.get_by_text(region), RUN_MS)
            assert page.locator("[data-testid='stMain'] img").count() >= 1  # the page, rendered with its regions
            assert_clean(page, f"upload, PDF regions ({lang})")
            text = main_text(page)
            assert region in text and ("旁注" in text if lang == "zh" else "margin note" in text)
            shoot(page, f"upload_pdf_regions_{lang}")
        finally:
            context.close()


def test_the_answer_page_shows_the_gate_and_the_quote_that_leads_in_both_languages(chromium, llm_app):
    """With a model answering (the fake endpoint), the gate's panel gives P(the contexts answer) against its operating
    point and the signals that drove it, the answer opens with the quote the selector chose, drawn apart, and the audit
    shows the learned verifier's check beside the rules'."""
    for lang, gate, lead, verifier in (("zh", "学习型闸门", "回答问题的那一句", "学习型核对"),
                                       ("en", "learned gate", "The sentence that answers", "learned verifier")):
        context = chromium.new_context(viewport=VIEWPORT, locale="zh-CN")
        try:
            page = context.new_page()
            page.goto(llm_app.url + "/answer" + ("?ui.lang=en" if lang == "en" else ""))
            settle(page, page.locator("[data-testid='stHtml'] a[href^='#ref-']"), FIRST_RUN_MS)
            assert_clean(page, f"answer with the gate and the lead ({lang})")
            text = main_text(page)
            assert gate in text and lead in text
            assert ("工作点" in text) if lang == "zh" else ("operating point" in text)
            assert verifier in text  # the audit's learned verifier, with its P, beside the rules' checks
            shoot(page, f"answer_gate_lead_{lang}")
        finally:
            context.close()

