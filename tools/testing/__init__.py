"""The fault-injection harness the tests and tools/crash share; never part of the installed package.

    faultfs.py      a file layer that loses unsynced data at a power cut, or fails an operation (ENOSPC, EIO)
    workload.py     the crash workload: random batches over every kind, and the model they must match
    derived.py      the workload's text and graph operations, and their model
    reference.py    a store's state as data, to compare a recovered store with the model
    damage.py       bit flips and truncations of a store's files, and what check must say about them
    plain.py        a store's files with their compression undone, for searches of forgotten bytes
    crashchild.py   the workload in a forked or spawned child (`python -m tools.testing.crashchild`)
    rwchild.py      writer, reader and lock-holder children of the concurrency tests
    scripts.py      a tools/crash script imported as a module, and the seed a test runs it with

engine.fs keeps the failpoint hooks and the replaceable file-operations object; nothing in engine imports this.
"""
