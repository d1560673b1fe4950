"""Helpers shared by the ingest tests."""

from __future__ import annotations

import os

from memctl.ingest.decode import decode
from memctl.ingest.detect import parse_document

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")


def parse(text: str, name: str = "input.txt", format=None, errors="strict"):
    """(format, conversations) of `text` as ingest reads it."""
    return parse_document(decode(text.encode("utf-8"), name, errors), name, format, errors)


def turns_of(text: str, name: str = "input.txt", format=None):
    return [turn for conversation in parse(text, name, format)[1] for turn in conversation.turns]
