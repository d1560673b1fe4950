"""`memctl repair`: salvage a damaged store and publish what it still holds, atomically (MANIFEST.spec §15).

Protocol (protocol.py): take the writer lock (a DAMAGE marker does not stop repair) and load the MANIFEST alone
(Store.open(repairing=True)); run `check`, and when it finds nothing, delete the marker and stop. Otherwise:
- records.py: write every record that reads back from the records segments (block by block: a damaged block
  loses the rows it holds) into one segment, named by no MANIFEST yet, which becomes the handle's only one;
- wal.py: read every batch of the live WAL files that reads back, before the damage and after it, and stage
  them over those records;
- raw.py: stage the deletion of the raw chunks whose blob is missing or damaged;
- for a store of an older format, stage the migration steps (engine/migration/);
then Store.rebuild: the derived segments (text postings, graph CSR) built again from the records alone, one
records segment, a new WAL, all named by one MANIFEST, whose `resolved_damage` voids the marker (the commit
point), and the marker deleted. A crash before the commit point leaves the damaged store, still refused to
writers; after it, the repaired one. The report says what was found, what was lost (records per table with
their keys when known, whole segments, WAL batches by sequence, raw chunks) and what was kept. With dry_run
the same report comes from a reader's handle (the salvaged records go to a temporary directory): nothing in
the store is written.
"""

from engine.repair.protocol import repair_store

__all__ = ["repair_store"]
