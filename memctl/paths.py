"""Where a tenant's store lives: --home, else $MEMCTL_HOME, else $XDG_DATA_HOME/memctl, else
~/.local/share/memctl; the tenant's directory is <home>/tenants/<tenant>."""

from __future__ import annotations

import os
import re

from engine.errors import InputError

TENANT_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
CONFIG_FILE = "memctl.yaml"


def resolve_home(home: str | None = None) -> str:
    if home:
        return os.path.abspath(os.path.expanduser(home))
    if os.environ.get("MEMCTL_HOME"):
        return os.path.abspath(os.path.expanduser(os.environ["MEMCTL_HOME"]))
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.abspath(data_home), "memctl")


def check_tenant(tenant: str) -> str:
    """Tenant names become directory names: only [A-Za-z0-9_-]{1,64}, so no path tricks. The whole name must
    match: `$` would also match before a trailing newline, and "abc\n" would become a directory."""
    if not isinstance(tenant, str) or not TENANT_PATTERN.fullmatch(tenant):
        raise InputError(f"tenant name {tenant!r} is not allowed: use 1-64 letters, digits, '_' or '-'",
                         where="--tenant")
    return tenant


def tenant_dir(home: str | None, tenant: str) -> str:
    return os.path.join(resolve_home(home), "tenants", check_tenant(tenant))


def check_creatable(directory: str) -> None:
    """A store can be created at `directory` unless the path runs through a file (`--home /etc/passwd`); that
    is a usage mistake (InputError), not an I/O error half-way through creating directories."""
    ancestor = os.path.abspath(directory)
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise InputError(f"cannot create a store at {directory}: {ancestor} is a file, not a directory",
                         where="--home")
