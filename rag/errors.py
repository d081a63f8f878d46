"""Typed errors of the RAG backend.

Every exception subclasses a built-in so callers can catch broadly, and every message says how to fix
the problem. Pages turn these into `st.error(...)`; the CLI prints them and exits non-zero.
Not handled here: logging (nothing in `rag/` logs secrets or swallows an error).
"""


class RagError(Exception):
    """Base class: anything the backend raises on purpose."""


class ConfigError(RagError, ValueError):
    """A parameter or setting is invalid (e.g. overlap >= chunk_size, unknown backend name)."""


class NothingToAsk(ConfigError):
    """A corpus that holds nothing a test question can be asked about; `zh` says the same in Chinese, so a page
    shows it in its UI language with `e.localized(lang)`."""

    def __init__(self, message: str, zh: str):
        super().__init__(message)
        self.zh = zh

    def localized(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else str(self)


class LoaderError(RagError, ValueError):
    """One input file cannot be read (empty, binary, bad encoding, malformed PDF/JSON/CSV).

    `str(e)` is the English message (the CLI, logs); `zh` is the same message in Chinese, so a page can
    show it in its UI language with `e.localized(lang)`. Every loader message comes in both.
    """

    def __init__(self, source: str, message: str, zh: str = ""):
        self.source = source
        self.reason = message
        self.zh = zh
        super().__init__(f"{source}: {message}")

    def localized(self, lang: str) -> str:
        """The message in `lang` ("zh" or "en"); English where no Chinese text was given."""
        return f"{self.source}：{self.zh}" if lang == "zh" and self.zh else str(self)


class ModelUnavailableError(RagError, RuntimeError):
    """A model cannot be loaded (not installed, not cached and no hub access, bad path)."""


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
