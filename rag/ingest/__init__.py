"""Ingest: files in, chunks out. The first stage of the RAG diagram: loader -> chunker.

- `documents.py`: loaders for txt/md/pdf/json/jsonl/csv and the `Document` they produce.
- `chunking.py`: the chunkers (fixed window, sentence, parent-child, heading-aware, semantic, whole document, and
  "auto": the one the document's form asks for) and the `Chunk` / `ChunkSet` every later stage cites.
- `markdown.py`: a Markdown file read as a document: blocks with their source spans, kinds (prose, code, formula,
  table, caption) and readable text (roles, images, admonitions, tabs and HTML as text); what is not prose.
- `markdown_rules.py`: the CommonMark parser (markdown-it-py) that reader walks, with front matter, admonitions,
  content tabs and display formulas between $$.
- `sections.py`: Markdown cut by its structure: heading sections packed by sentence, units kept whole, each chunk
  opening with its title path.
- `pdf_layout.py`: a PDF read as a page layout: running headers and footers, margin notes, figures, formulas, code
  and headings told apart (PDFium's characters, boxes and fonts), lines joined as a reader would.
- `pdf_text.py`: from a PDF's regions to the text a reader keeps (paragraphs, code, figures, notes after their
  paragraph), and `read_pdf`, the whole reading.
- `pdf_regions.py`: the region view: a page rendered with the regions the reader found drawn over it.
- `contextual.py`: contextual chunking: one sentence by the local model placing each chunk in its document.
- `semantic.py`: semantic chunking: cut where adjacent sentences' embeddings drift apart, and the curve.
- `sentences.py`: the sentence splitter that the chunkers, the reranker fallback and the audit share.
- `language.py`: zh or en, from the share of Chinese characters.
- `preview.py`: which chunk covers which span of a document, for the chunk preview.
"""
