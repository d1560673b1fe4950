"""Bulk import from JSONL and export to JSONL, GraphML and Graphviz DOT.

JSONL, one object per line (what tools/gen_synthetic.py writes and `export` produces):

    {"kind": "node", "id": "Concept:Win11蓝牙故障", "type": "Concept", "props": {...}, "created_at": 1.7e9}
    {"kind": "edge", "src": "Episode:e1", "type": "ABOUT", "dst": "Concept:Win11蓝牙故障", "weight": 0.9,
     "confidence": 0.8, "ts": "2025-09-15T10:35:10Z", "temporal": {"since": null, "until": null}, "id": "..."}

Any other field of a line goes into the node's or edge's properties. An edge's "id" is optional (default:
one edge per source, type and target). Nodes must come before the edges that use them.

Import streams: `batch_lines` lines are validated and written as one store batch (one WAL record, one
fsync). A bad line stops the import before its batch is written, naming the file and line; the batches
before it stay imported, and since nodes and edges are keyed, running the corrected file again converges.
"""

from __future__ import annotations

import itertools
import json
import json.scanner
import os
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from engine.codec import pack
from engine.errors import InputError
from engine.format import GRAPH_EDGE_TABLE
from engine.graph import traverse
from engine.graph.batch import GraphBatch
from engine.graph.memo import ImportMemo
from engine.collector import paused

DEFAULT_BATCH_LINES = 20000
MAX_LINE_BYTES = 16 << 20
_NODE_FIELDS = {"kind", "id", "type", "props", "created_at", "updated_at"}
_EDGE_FIELDS = {"kind", "id", "src", "dst", "type", "weight", "confidence", "ts", "temporal", "since", "until",
                "props", "created_at", "updated_at"}
FORMATS = ("jsonl", "graphml", "dot")
_KINDS = ("node", "edge")
_scan_object = json.scanner.make_scanner(json.JSONDecoder())  # json.loads without its per-call wrappers


@dataclass
class ImportReport:
    lines: int = 0
    nodes: int = 0
    edges: int = 0
    batches: int = 0
    bytes: int = 0  # of input read so far, for a progress bar over the file size


def import_jsonl(graph, source, batch_lines: int = DEFAULT_BATCH_LINES, progress=None,
                 before_commit=None) -> ImportReport:
    """Import nodes and edges from a JSONL path or binary/text stream; `progress(report)` after each batch;
    `before_commit(writer)` adds to each batch's GraphBatch what the caller commits with it."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as stream:
            return _import_stream(graph, stream, os.fspath(source), batch_lines, progress, before_commit)
    return _import_stream(graph, source, getattr(source, "name", "<input>"), batch_lines, progress, before_commit)


def _import_stream(graph, stream, name: str, batch_lines: int, progress, before_commit) -> ImportReport:
    if batch_lines < 1:
        raise InputError("batch_lines must be at least 1")
    report = ImportReport()
    memo = ImportMemo(store_is_empty=graph.node_ids_allocated() == 0)
    with paused():
        while lines := list(itertools.islice(stream, batch_lines)):
            report.bytes += sum(map(len, lines))
            pending = _parse_lines(lines, name, report.lines + 1)
            if pending:
                _write_batch(graph, pending, memo, name, report, before_commit)
            report.lines += len(lines)
            if progress is not None:
                progress(report)
    return report


def _parse_lines(lines: list, name: str, first_number: int) -> list:
    """[(line number, item)] of the non-blank lines: one UTF-8 decode and one C scanner call per object;
    _parse_line names the problem of any line that does not pass at once."""
    try:
        text = "".join(lines) if isinstance(lines[0], str) else b"".join(lines).decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or max(map(len, lines)) > MAX_LINE_BYTES:
        parsed = ((number, _parse_line(line, f"{name}:{number}")) for number, line in enumerate(lines, first_number))
        return [(number, item) for number, item in parsed if item is not None]
    parsed = []
    position = 0
    for number, line in enumerate(lines, first_number):
        end_of_line = text.find("\n", position)
        end_of_line = len(text) if end_of_line < 0 else end_of_line
        try:
            item, end = _scan_object(text, position)
        except (StopIteration, ValueError, RecursionError):
            item, end = None, position
        if not (isinstance(item, dict) and item.get("kind") in _KINDS and
                (end == end_of_line or text[end:end_of_line].isspace())):
            item = _parse_line(line, f"{name}:{number}")  # a blank line (None) or the line's error
        if item is not None:
            parsed.append((number, item))
        position = end_of_line + 1
    return parsed


def _parse_line(line, where: str):
    if len(line) > MAX_LINE_BYTES:
        raise InputError(f"line longer than {MAX_LINE_BYTES} bytes", where)
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"invalid UTF-8 at byte {error.start}", where) from None
    if not line.strip():
        return None
    try:
        item = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise InputError(f"not valid JSON ({str(error)[:80]})", where) from None
    if not isinstance(item, dict) or item.get("kind") not in _KINDS:
        raise InputError('each line must be an object with "kind": "node" or "edge"', where)
    return item


def _write_batch(graph, pending: list, memo: ImportMemo, name: str, report: ImportReport, before_commit) -> None:
    counts = {"node": 0, "edge": 0}
    done = f"; lines before {pending[0][0]} were imported" if report.batches else ""
    try:
        with graph.batch(memo, owned=True) as writer:
            for kind, run in itertools.groupby(pending, key=lambda entry: entry[1]["kind"]):
                run = list(run)
                if not _write_run_at_once(writer, kind, run):
                    for number, item in run:
                        try:
                            _ADD_ONE[kind](writer, *_ARGUMENTS[kind](item))
                        except InputError as error:
                            raise InputError(f"{error}{done}", f"{name}:{number}") from None
                counts[kind] += len(run)
            if before_commit is not None:
                before_commit(writer)
    except InputError as error:
        if error.where is not None:
            raise
        # The store refused the batch as a whole (a value msgpack cannot hold): find the line to name.
        raise InputError(f"{error}{done}", f"{name}:{_unstorable_line(pending)}") from None
    report.nodes += counts["node"]
    report.edges += counts["edge"]
    report.batches += 1


def _write_run_at_once(writer, kind: str, run: list) -> bool:
    """A run of node lines or of edge lines through the bulk API; False: go line by line."""
    try:
        rows = [_ARGUMENTS[kind](item) for _number, item in run]
    except InputError:
        return False
    return _ADD_NEW[kind](writer, rows)


def _unstorable_line(pending: list):
    for number, item in pending:
        try:
            pack(item)
        except (TypeError, ValueError, OverflowError):
            return number
    return f"{pending[0][0]}-{pending[-1][0]}"


def _node_arguments(item: dict) -> tuple:
    """add_node's arguments."""
    return item.get("id"), item.get("type"), _properties(item, _NODE_FIELDS), item.get("created_at")


def _edge_arguments(item: dict) -> tuple:
    """add_edge's arguments."""
    temporal = item.get("temporal") or {}
    if not isinstance(temporal, dict):
        raise InputError('"temporal" must be an object with "since" and "until"')
    return (item.get("src"), item.get("type"), item.get("dst"), item.get("weight", 1.0), item.get("confidence", 1.0),
            item.get("ts"), temporal.get("since", item.get("since")), temporal.get("until", item.get("until")),
            _properties(item, _EDGE_FIELDS), item.get("id"))


def _properties(item: dict, reserved: set) -> dict:
    properties = item.get("props") or {}
    if not isinstance(properties, dict):
        raise InputError('"props" must be an object')
    if item.keys() <= reserved:
        return properties
    extra = {name: value for name, value in item.items() if name not in reserved}
    return {**properties, **extra} if properties else extra


_ARGUMENTS = {"node": _node_arguments, "edge": _edge_arguments}
_ADD_ONE = {"node": GraphBatch.add_node, "edge": GraphBatch.add_edge}
_ADD_NEW = {"node": GraphBatch.add_new_nodes, "edge": GraphBatch.add_new_edges}


# --- export ---------------------------------------------------------------------------------------------


def export(graph, stream, fmt: str = "jsonl", around=None, k: int = 1, types=None, direction: str = "both",
           max_nodes: int | None = None) -> dict:
    """Write the whole graph, or the k-hop subgraph around key(s) `around`, to a text stream."""
    if fmt not in FORMATS:
        raise InputError(f"export format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    snapshot = graph.snapshot()
    if around is None:
        node_ids = snapshot.view.live_nodes()
    else:
        node_ids = np.sort(graph.khop(around, k, types, direction, max_nodes).reached.node)
    edges = traverse.gather(snapshot.view, node_ids, "out", graph._type_filter(types))
    position = np.searchsorted(node_ids, edges.neighbor)
    inside = position < len(node_ids)
    inside[inside] = node_ids[position[inside]] == edges.neighbor[inside]
    edges = edges.take(inside)
    node_keys = snapshot.node_keys(node_ids)
    nodes = [(key, graph.get_node(key)) for key in node_keys if key is not None]
    edge_records = [graph.store.get(GRAPH_EDGE_TABLE, key) for key in snapshot.edge_keys(edges.edge_id)]
    key_of = dict(zip(node_ids.tolist(), node_keys))
    edge_rows = [_edge_row(graph, key, record, key_of) for key, record in
                 zip(snapshot.edge_keys(edges.edge_id), edge_records) if record is not None]
    writer = {"jsonl": _write_jsonl, "graphml": _write_graphml, "dot": _write_dot}[fmt]
    writer(stream, nodes, edge_rows)
    return {"nodes": len(nodes), "edges": len(edge_rows)}


def _edge_row(graph, key: str, record: dict, key_of: dict) -> dict:
    return {"kind": "edge", "id": key, "src": key_of[record["src"]], "type": graph.type_names("edge")[record["type"]],
            "dst": key_of[record["dst"]], "weight": record["weight"], "confidence": record["confidence"],
            "ts": record["ts"], "temporal": {"since": record.get("since"), "until": record.get("until")},
            "props": record.get("props", {}), "created_at": record["created_at"], "updated_at": record["updated_at"]}


def _write_jsonl(stream, nodes: list, edges: list) -> None:
    for key, node in nodes:
        stream.write(json.dumps({"kind": "node", "id": key, "type": node["type"], "props": node["props"],
                                 "created_at": node["created_at"], "updated_at": node["updated_at"]},
                                ensure_ascii=False) + "\n")
    for edge in edges:
        stream.write(json.dumps(edge, ensure_ascii=False) + "\n")


def _write_graphml(stream, nodes: list, edges: list) -> None:
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                 '  <key id="type" for="node" attr.name="type" attr.type="string"/>\n'
                 '  <key id="label" for="node" attr.name="label" attr.type="string"/>\n'
                 '  <key id="edge_type" for="edge" attr.name="type" attr.type="string"/>\n'
                 '  <key id="weight" for="edge" attr.name="weight" attr.type="double"/>\n'
                 '  <graph id="memctl" edgedefault="directed">\n')
    for key, node in nodes:
        label = node["props"].get("title", key)
        stream.write(f'    <node id={quoteattr(key)}><data key="type">{escape(node["type"] or "")}</data>'
                     f'<data key="label">{escape(str(label))}</data></node>\n')
    for edge in edges:
        stream.write(f'    <edge id={quoteattr(edge["id"])} source={quoteattr(edge["src"])} '
                     f'target={quoteattr(edge["dst"])}><data key="edge_type">{escape(edge["type"])}</data>'
                     f'<data key="weight">{edge["weight"]!r}</data></edge>\n')
    stream.write("  </graph>\n</graphml>\n")


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _write_dot(stream, nodes: list, edges: list) -> None:
    stream.write("digraph memctl {\n")
    for key, node in nodes:
        label = f'{node["props"].get("title", key)}\n({node["type"]})'
        stream.write(f"  {_dot_string(key)} [label={_dot_string(label)}];\n")
    for edge in edges:
        stream.write(f'  {_dot_string(edge["src"])} -> {_dot_string(edge["dst"])} '
                     f'[label={_dot_string(edge["type"] + " " + format(edge["weight"], "g"))}, '
                     f'weight={edge["weight"]!r}];\n')
    stream.write("}\n")
