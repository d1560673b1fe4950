"""The property graph: typed nodes and edges as records, CSR adjacency segments, traversal and PageRank.

    api.py        GraphStore: the graph's Python API over one store (writes, reads, traversals)
    model.py      Node and Edge, the typed rows reads give, and the records they are stored as
    batch.py      GraphBatch: the writes of one store batch, and the bulk paths of an import
    memo.py       ImportMemo: what a bulk import's earlier batches wrote
    validate.py   checks of keys, numbers, times and properties callers hand the API
    keys.py       default edge keys and graph.dead keys
    results.py    Neighbors and KHop: read answers as arrays, keys decoded on demand
    kind.py       the `graph` derived kind: CSR segments from the records, the snapshot readers see
    part.py, view.py, csr.py     one flush's adjacency, parts merged by masks, the CSR arrays
    traverse.py, pagerank.py, kernels.py    neighbours, k-hop and degrees; personalized PageRank
    transfer.py   import from JSONL; export to JSONL, GraphML and DOT
"""
