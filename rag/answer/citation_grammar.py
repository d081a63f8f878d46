"""Constrained citations: a grammar under which every sentence is followed by a citation of a real ref.

A small model asked to cite often cites nothing, invents refs, or copies the block numbers ([1], [2]).
Under this grammar (llama.cpp's GBNF) the sampler may only write what the rules below allow, so:

- a bracket can only hold a whole ref that is in the prompt: a hallucinated ref cannot be produced;
- after a sentence's terminator (。！ or . !) the next thing written must be a citation
  ("七天内可退货。[faq_003]", the form the extractive stand-in writes and the sentence splitter keeps
  with its sentence), so no sentence the model finishes goes uncited;
- the fixed cannot-answer reply 资料不足 (or "not enough information") may stand alone, uncited.

    root     ::= refusal | sentence+       (sentence sentence? ... with max_sentences)
    refusal  ::= "资料不足" [。.]?
    sentence ::= body end cite+ space
    body     ::= (char | num)+        char: anything but a bracket, a terminator, a question mark, a digit or a
                                      line break (an answer does not ask: the 0.5B's commonest miss was to
                                      write the question back, which ends in ？)
                                      (； is not a terminator: the audit keeps "A；B。" as one claim)
    num      ::= [0-9]{1,12} ("." [0-9]{1,12})?  a decimal point (0.5, 1e-5 is digits and letters) does not end a
                                      sentence; any other . ! ? does, so it must be cited ("Fusion.#..."
                                      and "60.0.0323.0323..." were how the 0.5B dodged the citation); at
                                      most 12 digits a run ("1.1000000000..." ran to max_tokens)
    end      ::= [。！.!]
    cite     ::= "[" ref "]"
    ref      ::= "faq_003" | "faq_017" | ...    exactly the refs in the prompt
    space    ::= [ \n]?       one blank at most: after its last sentence the 0.5B wrote hundreds of spaces up to
                                      its token cap (the answers issue's slowest answers)

What it cannot do: make the cited chunk support its sentence (the model picks the ref it finds most
likely, which may be the wrong one), or make a model end a run-on sentence cut off by max_tokens. The
audit (rag/audit/citations.py) still checks every sentence. The price is style: a list item needs a
terminator and a citation of its own.
Not handled here: running the grammar (rag/models/local_llm.py passes it to llama.cpp).
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.answer.prompt import NOT_ENOUGH
from rag.errors import ConfigError

CITE_MODES = ("free", "constrained")


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def citation_grammar(refs: Sequence[str], lang: str = "zh", max_sentences: int | None = None,
                     refusal: bool = True) -> str:
    """GBNF text for an answer whose every sentence cites one of `refs` (or the bare cannot-answer reply).
    `max_sentences` caps the answer (the fill-in mode's model writes the direct answer only); `refusal=False`
    leaves the cannot-answer reply out (the answerability gate has already decided the contexts answer)."""
    refs = list(dict.fromkeys(r for r in refs if r))
    if not refs:
        raise ConfigError("constrained citations need at least one context ref; retrieve something first")
    if max_sentences is not None and max_sentences < 1:
        raise ConfigError(f"max_sentences={max_sentences} must be at least 1")
    reply = NOT_ENOUGH.get(lang, NOT_ENOUGH["zh"])
    sentences = "sentence+" if max_sentences is None else " ".join(["sentence"] + ["sentence?"] * (max_sentences - 1))
    return "\n".join([
        f"root ::= refusal | {sentences}" if refusal else f"root ::= {sentences}",
        f"refusal ::= {_literal(reply)} [。.]?",
        "sentence ::= body end cite+ space",
        "body ::= (char | num)+",
        "char ::= [^\\[\\]【】。！？.!?？?\\n0-9]",
        'num ::= [0-9]{1,12} ("." [0-9]{1,12})?',
        "end ::= [。！.!]",
        'cite ::= "[" ref "]"',
        "ref ::= " + " | ".join(_literal(r) for r in refs),
        "space ::= [ \\n]?",
    ]) + "\n"
