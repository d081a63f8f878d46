"""Typed errors of the RAG backend.

Every exception subclasses a built-in so callers can catch broadly, and every message says how to fix
the problem. Pages turn these into `st.error(...)`; the CLI prints them and exits non-zero.
Not handled here: logging (nothing in `rag/` logs secrets or swallows an error).
"""


class RagError(Exception):
    """Base class: anything the backend raises on purpose."""


class ConfigError(RagError, ValueError):
    """A parameter or setting is invalid (e.g. overlap >= chunk_size, unknown backend name)."""


class LoaderError(RagError, ValueError):
    """One input file cannot be read (empty, binary, bad encoding, malformed PDF/JSON/CSV)."""

    def __init__(self, source: str, message: str):
        self.source = source
        super().__init__(f"{source}: {message}")


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


class GenerationCancelled(LLMError):
    """The caller stopped a generation (Stop, a rerun, leaving the page); the model is free again."""
