"""`memctl raw cat|ls|gc`: the stored raw chunks, byte-exact (Memory.raw)."""

import typer

from memctl.cli.common import console, open_memory, print_json


def cat(
    context: typer.Context,
    reference: str = typer.Argument(..., metavar="ID",
                                    help="A raw chunk id (raw_<16 hex digits>), a span as recall prints it "
                                         "(raw_…@OFFSET+LENGTH), or the chunk's full sha256."),
    offset: int = typer.Option(None, "--offset", min=0, help="First byte of the span (default 0)."),
    length: int = typer.Option(None, "--length", min=0, help="Bytes in the span (default: to the end)."),
) -> None:
    """Print a raw chunk, or the span of it a raw_ref names, exactly as stored (checksum verified).

    Example: memctl raw cat raw_0123456789abcdef@120+64   (= raw_0123456789abcdef --offset 120 --length 64)
    """
    with open_memory(context, writable=False, holder="memctl raw cat") as memory:
        data = memory.raw.read(reference, offset, length)
    typer.echo(data, nl=False)


def ls(
    context: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of chunk records."),
) -> None:
    """List the raw chunks: id, size, stored size, references, conversation, source ids, time, language.

    Example: memctl raw ls --json
    """
    with open_memory(context, writable=False, holder="memctl raw ls") as memory:
        chunks = memory.raw.list()
    if as_json:
        print_json(chunks)
        return
    _print_table(chunks)


def gc(
    context: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the removed paths as a JSON list."),
) -> None:
    """Remove blob files that no record names (left by a crash mid-ingest or mid-delete).

    Example: memctl raw gc
    """
    with open_memory(context, writable=True, holder="memctl raw gc") as memory:
        removed = memory.raw.gc()
    if as_json:
        print_json(removed)
    else:
        typer.echo(f"removed {len(removed)} unreferenced file(s)")


def _print_table(chunks: list[dict]) -> None:
    from rich.table import Table

    table = Table(show_header=True)
    # Never wrapped nor cut: ids are copied into other commands.
    table.add_column("id", no_wrap=True, min_width=max((len(chunk["raw_id"]) for chunk in chunks), default=2))
    for name in ("bytes", "stored", "refs"):
        table.add_column(name, justify="right")
    for name in ("conversation", "sources", "time", "lang"):
        table.add_column(name)
    for chunk in chunks:
        meta = chunk.get("meta") or {}
        table.add_row(chunk["raw_id"], f"{chunk['len_bytes']:,}", f"{chunk['stored_bytes']:,}",
                      str(chunk["refcount"]), str(meta.get("conv_id") or ""), str(meta.get("source_id") or ""),
                      str(meta.get("ts") or ""), str(meta.get("lang") or ""))
    console().print(table)
    console().print(f"{len(chunks):,} chunk(s)", highlight=False)
