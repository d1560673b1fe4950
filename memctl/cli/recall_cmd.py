"""`memctl recall`: memories for a query, with citations, inside a token budget (seed 001 §4.y W3–W6, §5),
through Memory.recall / explain / keywords.

`memctl recall QUERY` recalls; the modes are subcommands: `recall explain ID`, `recall batch FILE.jsonl`,
`recall keywords QUERY`. The older forms stay as aliases: `--q TEXT` for QUERY (seed 001 §25.5),
`--extract-keywords` (seed 001 §4.y), `--explain ID` and `--queries FILE`. A query that is exactly a
subcommand's name goes after `--` or in --q (memctl/cli/verb_group.py).

The cold path imports numpy, the engine's text and graph readers and memctl/recall, never jieba's dictionary
(Chinese queries are segmented against the index's own terms) or numba.
"""

import typer

from memctl.cli.common import one_query, open_memory, print_json
from memctl.cli.verb_group import VerbGroup

ALIASES = "Aliases"

recall_app = typer.Typer(cls=VerbGroup, invoke_without_command=True, subcommand_metavar="| COMMAND [ARGS]...")

# Options shared by the recall itself and its subcommands (Memory.recall's options).
TOP = typer.Option(10, "--top", min=1, max=10_000, metavar="N", help="At most N results.")
BUDGET = typer.Option(None, "--budget", min=0, metavar="TOKENS",
                      help="Token budget of the packed results (default recall.budget_tokens; 0: none).")
K_HOP = typer.Option(None, "--k-hop", min=0, max=5, metavar="K",
                     help="Graph expansion depth (default recall.k_hop, or recall.mvp_k_hop with --mvp).")
TYPES = typer.Option(None, "--types", metavar="T,…",
                     help="Result node types, comma-separated or repeated (default recall.result_types; RawPassage "
                          "for raw-only hits).")
SINCE = typer.Option(None, "--since", metavar="D", help="Only memories from this time on (ISO date).")
UNTIL = typer.Option(None, "--until", metavar="D", help="Only memories up to this time (ISO date).")
GRAPH_ONLY = typer.Option(False, "--graph-only",
                          help="Do not use the NodeIndex: boolean filter over the graph (W4 fallback).")
ALLOW_RAW = typer.Option(False, "--allow-raw", help="Also search the raw text (W5 fallback).")
CITE = typer.Option(False, "--cite", help="Look for the source text too: runs the raw fallback.")
MVP = typer.Option(False, "--mvp", help="MVP workflow: k = 1, recall.mvp_lambda, mvp edge types.")
NOW = typer.Option(None, "--now", metavar="D", help="Reference time for recency and relative dates (default: now).")
AS_OF = typer.Option(None, "--as-of", metavar="T",
                     help="Answer as of T (ISO date or date-time; a date means its end): a question about a "
                          "person's attribute gets the version valid at T; every result as with --until T; T is "
                          "the reference time unless --now is given.")
TRACE = typer.Option(False, "--trace", help="Show each stage: timings, candidates, top scores, fallbacks.")
JSON = typer.Option(False, "--json", help="Print JSON (see README for the schema).")


@recall_app.callback()
def recall(
    context: typer.Context,
    query: str = typer.Argument(None, metavar="QUERY", show_default=False, help="The query, any language."),
    top: int = TOP, budget: int = BUDGET, k_hop: int = K_HOP, types: list[str] = TYPES, since: str = SINCE,
    until: str = UNTIL, graph_only: bool = GRAPH_ONLY, allow_raw: bool = ALLOW_RAW, cite: bool = CITE,
    mvp: bool = MVP, now: str = NOW, as_of: str = AS_OF, trace: bool = TRACE, as_json: bool = JSON,
    q: str = typer.Option(None, "--q", metavar="TEXT", rich_help_panel=ALIASES,
                          help="= QUERY (seed 001 §25.5: recall --q \"…\")."),
    extract_keywords: bool = typer.Option(False, "--extract-keywords", rich_help_panel=ALIASES,
                                          help="= `recall keywords QUERY` (seed 001 §4.y)."),
    explain: str = typer.Option(None, "--explain", metavar="NODE_ID", hidden=True),
    queries: str = typer.Option(None, "--queries", metavar="FILE.jsonl", hidden=True),
) -> None:
    """Recall memories: NodeIndex BM25 → raw fallback → graph expansion (reply hop, k-hop + PPR) → ranking →
    budget packing; each result with its evidence path and citations checked against the raw blob's sha256.

    Example: memctl recall "Win11 蓝牙 打不开" --budget 1500 --trace
    """
    given = dict(locals())
    if context.invoked_subcommand is not None:
        return
    from engine.errors import InputError

    if queries is not None:
        if query is not None or q is not None or explain is not None or extract_keywords:
            raise InputError("--queries runs its own queries: leave out QUERY, --q, --explain and --extract-keywords")
        _batch(context, queries, given, trace, as_json)
    elif explain is not None:
        _explain(context, explain, None if query is None and q is None else one_query(query, q), given, as_json)
    elif extract_keywords:
        _keywords(context, one_query(query, q), given, as_json)
    else:
        _recall(context, one_query(query, q), given, trace, as_json)


@recall_app.command("explain")
def explain_command(
    context: typer.Context,
    key: str = typer.Argument(..., metavar="ID", help="A node key, as recall prints it."),
    q: str = typer.Option(None, "--q", metavar="TEXT", help="Also show where the node ranks for this query."),
    top: int = TOP, budget: int = BUDGET, k_hop: int = K_HOP, types: list[str] = TYPES, since: str = SINCE,
    until: str = UNTIL, graph_only: bool = GRAPH_ONLY, allow_raw: bool = ALLOW_RAW, cite: bool = CITE,
    mvp: bool = MVP, now: str = NOW, as_of: str = AS_OF, as_json: bool = JSON,
) -> None:
    """Explain one node: its weight and recency, neighbours and citations; with --q, its rank for that query.

    Example: memctl recall explain "Episode:…" --q "Kyoto peanut allergy"
    """
    _explain(context, key, q, dict(locals()), as_json)


@recall_app.command("batch")
def batch_command(
    context: typer.Context,
    file: str = typer.Argument(..., metavar="FILE.jsonl",
                               help='One {"id": …, "q": …, options…} per line; - for stdin.'),
    top: int = TOP, budget: int = BUDGET, k_hop: int = K_HOP, types: list[str] = TYPES, since: str = SINCE,
    until: str = UNTIL, graph_only: bool = GRAPH_ONLY, allow_raw: bool = ALLOW_RAW, cite: bool = CITE,
    mvp: bool = MVP, now: str = NOW, as_of: str = AS_OF, trace: bool = TRACE,
    as_json: bool = typer.Option(False, "--json", help='One {"id", "results"} line per query, in order.'),
) -> None:
    """Recall for every query of a JSONL file, the store opened once; the options are every line's defaults.

    Every line is checked before any query runs (a bad one: exit 2 naming file:line, nothing printed).
    A line's options (top, budget, k_hop, types, since, until, graph_only, allow_raw, cite, mvp, now, as_of)
    override.

    Example: memctl recall batch questions.jsonl --json --top 20
    """
    _batch(context, file, dict(locals()), trace, as_json)


@recall_app.command("keywords")
def keywords_command(
    context: typer.Context,
    query: str = typer.Argument(..., metavar="QUERY", help="The query, any language."),
    now: str = NOW, graph_only: bool = GRAPH_ONLY, as_json: bool = JSON,
) -> None:
    """Show what recall would look for (W3): keywords, entities, times, pattern tokens and clauses.

    Example: memctl recall keywords "Win11 蓝牙 打不开 0x8007045D"
    """
    _keywords(context, query, dict(locals()), as_json)


# --- the modes, whichever form asked for them ---------------------------------------------------------------


def _recall(context: typer.Context, text: str, given: dict, trace: bool, as_json: bool) -> None:
    from memctl.cli.recall_render import show_answer
    from memctl.cli.recall_requests import request_fields

    fields = request_fields(given)
    with open_memory(context, writable=False, holder="memctl recall") as memory:
        show_answer(memory.recall(text, **fields, explain=trace), as_json, trace)


def _explain(context: typer.Context, key: str, text: str | None, given: dict, as_json: bool) -> None:
    from memctl.cli.recall_render import show_explain
    from memctl.cli.recall_requests import request_fields

    fields = request_fields(given)
    with open_memory(context, writable=False, holder="memctl recall") as memory:
        show_explain(memory.explain(key, text, **fields), as_json)


def _keywords(context: typer.Context, text: str, given: dict, as_json: bool) -> None:
    from memctl.cli.recall_render import show_keywords
    from memctl.cli.recall_requests import request_fields

    fields = request_fields({name: given[name] for name in ("now", "graph_only")})
    with open_memory(context, writable=False, holder="memctl recall") as memory:
        show_keywords(memory.keywords(text, **fields), as_json)


def _batch(context: typer.Context, path: str, given: dict, trace: bool, as_json: bool) -> None:
    from memctl.cli.recall_render import show_answer
    from memctl.cli.recall_requests import read_batch, request_fields

    batch = read_batch(path, request_fields(given))
    with open_memory(context, writable=False, holder="memctl recall") as memory:
        memory.store  # noqa: B018 - a missing store is exit 2 even when the file holds no query
        for identifier, text, fields in batch:
            answer = memory.recall(text, **fields, explain=trace)
            if as_json:
                line = {"id": identifier, "results": answer["results"], "packing": answer["packing"]}
                if trace:
                    line["trace"] = answer["trace"]
                print_json(line)
            else:
                typer.echo(f"== {identifier}: {text}")
                show_answer(answer, False, trace)
