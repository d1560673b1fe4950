"""Helpers shared by the ingest tests."""

from __future__ import annotations

import os

import pytest

from memctl.ingest.decode import decode
from memctl.ingest.detect import parse_document

LOCOMO_DEV = "/work/shared/locomo/locomo-dev.json"
MEMDAILY_DEV = "/work/shared/locomo/zh-memdaily-dev.json"
SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")

needs_locomo = pytest.mark.skipif(not os.path.exists(LOCOMO_DEV), reason="LoCoMo dev files not present")


def parse(text: str, name: str = "input.txt", format=None, errors="strict"):
    """(format, conversations) of `text` as ingest reads it."""
    return parse_document(decode(text.encode("utf-8"), name, errors), name, format, errors)


def turns_of(text: str, name: str = "input.txt", format=None):
    return [turn for conversation in parse(text, name, format)[1] for turn in conversation.turns]
