"""The store's text indexes that memctl keeps, by owner name (engine.text.tables; MANIFEST.spec §4a).

Memories and documents never share an index: recall ranks by the BM25 statistics of the memory graph's nodes
alone, whatever documents a user indexes, and a document search never returns a node. Raw passage search
(recall/raw_fallback.py) builds its index in memory per recall and keeps none.
"""

NODES = "text:nodes"  # R2G's NodeIndex: Episodes, Facts, Preferences, Concepts (r2g/nodeindex.py); read by recall
DOCUMENTS = "text:documents"  # plain documents: `memctl index` writes them, `memctl search` reads them
