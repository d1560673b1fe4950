"""The input options `ingest` and `remember` share: where the conversations come from and how they are read."""

import typer


def raw_option():
    return typer.Option(None, "--raw", metavar="PATH",
                        help="A file, a directory (read recursively), a glob, or - for stdin. Repeatable.")


def text_option():
    return typer.Option(None, "--text", metavar="TEXT", help="Text given here, as it is. Repeatable.")


def format_option():
    return typer.Option("auto", "--format", metavar="FORMAT",
                        help="auto, text, transcript, jsonl, messages or locomo (also reads MemDaily).")


def errors_option():
    return typer.Option("strict", "--errors", metavar="MODE",
                        help="strict: refuse invalid UTF-8; replace: accept it with U+FFFD.")


MAX_JOBS = 64


def jobs_option():
    return typer.Option(1, "--jobs", "-j", metavar="N", min=0, max=MAX_JOBS,
                        help="Analyse turns in N worker processes while this one writes (0: one per CPU core); "
                             "the graph is the same as with 1. Pays off from a few thousand turns.")


def job_count(jobs: int) -> int:
    import os

    return jobs or os.cpu_count() or 1
