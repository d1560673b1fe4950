"""Format 3 → 4: memctl's plain documents apart from its memories (MANIFEST.spec §4a, §14).

Up to format 3 a store has one text index, the unnamed instance "text" (tables text.doc, text.dead, text.meta,
counter text.docno), holding both R2G's node documents and the documents of `memctl index`. Format 4 keeps them
in two named instances, NODES and DOCUMENTS (memctl/indexes.py names the same two).

Which documents are nodes: those whose key is the key of a graph.node record (of a live or a deleted node).
R2G indexes a node under the node's own key, and `memctl index` keys a document by its file name ("stdin" for
standard input), which no node key is: R2G's are its ids ("ep_…", "fact_…"). The node's type would not do:
`memctl index --type Fact` gives a plain document the type of an indexed node.

Moved: every document record to the `doc` table of its instance, its value unchanged (readers take every
record layout since format 2); the analysis signature (text.meta) to each instance that receives a document;
the docno counter's value to the counter of each such instance, so that no docno is handed out twice within
one. Dropped: the text.dead records, since the rebuilt segments hold live documents only and a retired docno
then names nothing, and the text.docno counter.
"""

from __future__ import annotations

from engine.format import GRAPH_NODE_TABLE
from engine.migration.steps import Changes
from engine.text.kind import SIGNATURE_KEY
from engine.text.tables import text_tables

NAME = "split_text_index"
TO_VERSION = 4
NODES = "text:nodes"
DOCUMENTS = "text:documents"
_OLD = text_tables("text")


def plan(store, hooks: dict) -> Changes:
    documents = list(store.scan(_OLD.documents))
    is_node = [record is not None for record in store.get_many(GRAPH_NODE_TABLE, [key for key, _ in documents])]
    batch = store.batch()
    moved = {NODES: 0, DOCUMENTS: 0}
    for (key, value), node in zip(documents, is_node):
        owner = NODES if node else DOCUMENTS
        batch.put(text_tables(owner).documents, key, value)
        batch.delete(_OLD.documents, key)
        moved[owner] += 1
    signature = store.get(_OLD.meta, SIGNATURE_KEY)
    for owner in (owner for owner, count in moved.items() if count):
        if signature is not None:
            batch.put(text_tables(owner).meta, SIGNATURE_KEY, signature)
        # Every docno below the old counter counts as allocated in the new instance.
        batch.allocate(text_tables(owner).docno, store.counter(_OLD.docno))
    retired = [key for key, _ in store.scan(_OLD.dead)]
    for key in retired:
        batch.delete(_OLD.dead, key)
    for key, _ in store.scan(_OLD.meta):
        batch.delete(_OLD.meta, key)
    counts = {"node_documents": moved[NODES], "documents": moved[DOCUMENTS], "retired_docnos_dropped": len(retired)}
    return Changes(counts, batch.runs, [_OLD.docno])
