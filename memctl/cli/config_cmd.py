"""`memctl config show|doc`: the settings in effect and where each came from, and the reference of every key.

Neither command opens the store: they read the schema and the settings files only.
"""

from __future__ import annotations

import typer

from memctl.cli.common import MemctlGroup, options, print_json

config_app = typer.Typer(cls=MemctlGroup, no_args_is_help=True,
                         help="Settings: the values in effect, where each came from, and what every key does.\n\n"
                              "Example: memctl config show recall")


@config_app.command("show")
def show(
    context: typer.Context,
    prefix: str = typer.Argument(None, metavar="[KEY]",
                                 help="Only this key or group (recall, recall.raw, graph.edge_weights…)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print every setting's effective value and its origin: default, the tenant's memctl.yaml (file:line) or
    --config (file:line). Opens no store: it works before the first ingest, and on a tenant that has none.

    Example: memctl --config tuned.yaml config show recall.lambda --json
    """
    import os

    from memctl.paths import CONFIG_FILE, tenant_dir
    from memctl.settings import load

    chosen = options(context)
    settings = load(os.path.join(tenant_dir(chosen.home, chosen.tenant), CONFIG_FILE), chosen.config)
    entries = _selected(settings.entries(), prefix)
    if as_json:
        print_json({"files": [{"layer": source.layer, "path": source.path, "found": source.found}
                              for source in settings.files],
                    "settings": [{"key": name, "value": value, "origin": origin.layer, "file": origin.path,
                                  "line": origin.line} for name, value, origin in entries]})
        return
    _print_files(settings.files)
    _print_entries(entries)


@config_app.command("doc")
def doc(as_json: bool = typer.Option(False, "--json", help="Print the keys as a JSON list.")) -> None:
    """Print the reference of every setting: type and range, default, what it does, where the default comes
    from and which module reads it (the text of memctl/settings/REFERENCE.md).

    Example: memctl config doc --json
    """
    from memctl.settings import reference

    if as_json:
        print_json(reference.records())
    else:
        typer.echo(reference.markdown(), nl=False)


def _selected(entries: list, prefix: str | None) -> list:
    if not prefix:
        return entries
    chosen = [entry for entry in entries if entry[0] == prefix or entry[0].startswith(prefix + ".")]
    if not chosen:
        from engine.errors import InputError
        from memctl.settings.load import unknown_message

        raise InputError(unknown_message(prefix), where="KEY")
    return chosen


def _print_files(files) -> None:
    typer.echo("defaults: memctl/settings/schema.py (`memctl config doc`)")
    for source in files:
        state = "" if source.found else " (not present)"
        typer.echo(f"{source.layer}: {source.path}{state}")
    typer.echo("")


def _print_entries(entries: list) -> None:
    from memctl.settings.reference import yaml_text

    rows = [(name, yaml_text(value), str(origin)) for name, value, origin in entries]
    name_width = max(len(name) for name, _, _ in rows)
    value_width = min(max(len(value) for _, value, _ in rows), 40)
    for name, value, origin in rows:
        typer.echo(f"{name:<{name_width}}  {value:<{value_width}}  {origin}")
