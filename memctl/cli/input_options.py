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
