"""Typed errors of the RAG backend.

Every exception subclasses a built-in so callers can catch broadly, and every message says how to fix
the problem. Pages turn these into `st.error(...)`; the CLI prints them and exits non-zero.
The errors a page shows in its UI language hold their message as one Msg (`Bilingual`): str(e) is the English text
the CLI prints, `e.localized(lang)` the one a page shows.
Not handled here: logging (nothing in `rag/` logs secrets or swallows an error).
"""

from rag.messages import Msg, localized


class Bilingual:
    """An error whose message is a Msg (`text`), the project's one bilingual text (issue 66, item 3: three errors each
    kept their own `.zh` and the page found `localized` by getattr)."""

    text: Msg

    def localized(self, lang: str) -> str:
        return localized(self.text, lang)


class RagError(Exception):
    """Base class: anything the backend raises on purpose."""


class ConfigError(RagError, ValueError):
    """A parameter or setting is invalid (e.g. overlap >= chunk_size, unknown backend name)."""


class NothingToAsk(Bilingual, ConfigError):
    """A corpus that holds nothing a test question can be asked about; said in both languages."""

    def __init__(self, text: Msg):
        super().__init__(str(text))
        self.text = text


class LoaderError(Bilingual, RagError, ValueError):
    """One input file cannot be read (empty, binary, bad encoding, malformed PDF/JSON/CSV).

    `str(e)` is the English message (the CLI, logs), "source: reason"; `e.localized("zh")` the same in Chinese. Every
    loader message comes in both (`reason`, a Msg).
    """

    def __init__(self, source: str, reason: Msg):
        self.source = source
        self.reason = reason
        self.text = Msg(en=f"{source}: {reason.en}", zh=f"{source}：{reason.zh}")
        super().__init__(str(self.text))


class ModelUnavailableError(Bilingual, RagError, RuntimeError):
    """A model cannot be loaded (not installed, not cached and no hub access, bad path). The local model's and the
    llama.cpp server's reasons are a Msg (a page and a fallback's note say them in the UI's language); a plain str
    where only English is written."""

    def __init__(self, text: str = ""):
        super().__init__(str(text))
        self.text = text if isinstance(text, Msg) else Msg(en=str(text), zh=str(text))


class LLMError(RagError, RuntimeError):
    """The language-model endpoint failed; subclasses say how."""


class LLMAuthError(LLMError):
    """401/403: the API key was rejected."""


class LLMNotFoundError(LLMError):
    """404: wrong model name or base URL."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached or timed out."""


class LLMUnavailableError(LLMError):
    """No language model is configured, so a stage that needs one cannot run."""


class LLMUnsupportedError(LLMError):
    """The backend cannot do what was asked (an endpoint gives no next-token probabilities here)."""


class GenerationCancelled(LLMError):
    """The caller stopped a generation (Stop, a rerun, leaving the page); the model is free again."""
