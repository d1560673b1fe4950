"""Upgrading a store of an older format in place: `memctl migrate` (MANIFEST.spec §14).

The protocol (protocol.py): take the writer lock; open the store with the version-tolerant readers
(Store.open(migrating=True)), which replays its WAL into the memtable; run, in order, every step whose format
the store predates, each staging its changes on that handle (Store.stage: nothing is logged); then publish
everything at once with Store.rebuild: one records segment of the live records, the segments of every derived
kind instance built again from its records by today's writers, a MANIFEST of today's format, then a new, empty
WAL. Until the MANIFEST is current nothing the old format's code reads has changed, so a crash leaves the old
store (and the migration can run again); after it, the migrated one.

Steps (steps.py lists them in the order they run). A step is a module of this package named after what it
changes, with NAME, TO_VERSION (the format that introduced the change: the step runs on stores older than
it) and plan(store, hooks), which reads the store as the steps before it left it and returns a steps.Changes
(hooks: what the caller knows of the layer above the engine, by name; see protocol.migrate_store). Only
a change of meaning needs a step (a record moved to another table, a field that means something else); a
change of layout (how a segment or a record is encoded) needs none, since every record is read by the
version-tolerant readers and every segment is written again by today's writers. A later format adds its steps
at the end of steps.STEPS.
"""

from engine.migration.protocol import migrate_store

__all__ = ["migrate_store"]
