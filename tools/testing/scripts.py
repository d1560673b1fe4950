"""Import a tools/crash script as a module, so tests drive its `run()` with CI-sized counts (tests only)."""

from __future__ import annotations

import importlib.util
import os
import sys

CRASH_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "tools", "crash")


def crash_tool(name: str):
    module_name = f"memctl_crash_tool_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    if CRASH_TOOLS not in sys.path:
        sys.path.insert(0, CRASH_TOOLS)  # the scripts import their shared crashtool module by name
    spec = importlib.util.spec_from_file_location(module_name, os.path.join(CRASH_TOOLS, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def seed(default: int) -> int:
    """MEMCTL_SEED replays a run; otherwise each test's fixed seed keeps CI deterministic."""
    return int(os.environ.get("MEMCTL_SEED", default))
