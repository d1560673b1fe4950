"""memctl's settings: one schema (schema.py) of every key memctl reads, with type, range, default, the seed
section the default comes from and the module that reads it; the layering of the defaults, a tenant's
memctl.yaml and --config FILE (load.py); and the effective values with their origins (effective.py).

    settings = load(tenant_file, config_file)
    settings.recall.k_hop, settings.get("graph.degree_cap"), settings.origin("recall.k_hop")
"""

from memctl.settings.effective import Origin, Settings, View, defaults, resolve
from memctl.settings.load import load

__all__ = ["Origin", "Settings", "View", "defaults", "load", "resolve"]
