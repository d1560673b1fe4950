"""Development tools: benchmarks, crash injection, evaluation, and the test harness (tools.testing).

Never installed: pyproject's packages.find takes memctl* and engine* only. Tests and tools/crash scripts import
tools.testing from the repository root (tests/conftest.py and tools/crash/crashtool.py put it on sys.path).
"""
