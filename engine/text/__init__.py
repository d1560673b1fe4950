"""Full-text search: tokenizer, varint postings, front-coded term dictionary, BM25+ over fields.

Nothing here is imported eagerly: `memctl search` pays only for the modules its query touches.
"""
