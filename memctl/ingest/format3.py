"""The generic fields of a turn that a version-3 store holds, asked of the adapters that know its input's keys.

Version 3 stored no session, attachments or reply_to: the LoCoMo adapter kept its captions in extra and R2G
parsed sessions from LoCoMo's source ids; the JSONL and messages adapters kept every such key in extra;
transcripts and plain text have none. A version-3 row does not say which adapter wrote it, so each adapter's mapping is asked
in turn (LoCoMo's, then JSONL's, whose explicit keys win), and a row none of them recognises keeps its extra
and has no generic field. `memctl migrate` calls `generic_fields` for every turn it rewrites.
"""

from __future__ import annotations

from memctl.ingest import jsonl, locomo


def generic_fields(source_id: str, extra: dict) -> dict:
    """{"session": str or None, "attachments": tuple, "reply_to": str or None, "extra": what stays extra}."""
    fields = {"session": None, "attachments": (), "reply_to": None}
    found = locomo.generic_fields_of_format_3(source_id, extra)
    fields.update(found)
    found = jsonl.generic_fields_of_format_3(fields["extra"])
    attachments = fields["attachments"] + found.pop("attachments", ())
    fields.update(found, attachments=attachments)
    return fields


def migration_hooks() -> dict:
    """What `memctl migrate` hands the engine's migration steps (engine.migration.protocol.migrate_store)."""
    return {"turn_fields": generic_fields}
