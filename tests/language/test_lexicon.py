"""The lexicons: the shipped files hold no YAML surprises (on/off/no read as booleans, empty entries as nulls);
aliases are looked up as recall and R2G use them; a lexicon directory stands in for memctl/data file by file."""

import pytest

from engine.errors import InputError
from memctl.language.lexicon import DATA_DIRECTORY, aliases, load_yaml, use_directory


def _scalars(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    else:
        yield value


@pytest.mark.parametrize("path", sorted(DATA_DIRECTORY.glob("*.yaml")), ids=lambda path: path.name)
def test_no_booleans_or_nulls_in_word_lists(path):
    data = load_yaml(path.name)
    if path.name == "slots.yaml":  # multi_valued is a flag, not a word
        data = {name: {key: value for key, value in slot.items() if key != "multi_valued"}
                for name, slot in data["slots"].items()}
    allowed_none = path.name == "en_words.yaml"  # catenatives: null means "not a modality"
    for scalar in _scalars(data):
        assert not isinstance(scalar, bool), f"{path.name}: a word was read as {scalar!r}; quote it"
        assert scalar is not None or allowed_none


def test_aliases_fold_case_except_short_capitals():
    table = aliases()
    assert table.lookup("win11").canonical == table.lookup("Win11").canonical == "Windows 11"
    assert table.lookup("蓝牙").canonical == "Bluetooth"
    assert table.lookup("US").canonical == "United States"
    assert table.lookup("us") is None  # the pronoun


def test_a_lexicon_directory_replaces_files_it_holds_and_bad_yaml_names_its_place(tmp_path):
    (tmp_path / "aliases.yaml").write_text("Kyoto: {type: Location, aliases: [京都]}\n", encoding="utf-8")
    (tmp_path / "gazetteer.yaml").write_text("given_names: [Ann\n", encoding="utf-8")
    try:
        use_directory(str(tmp_path))
        assert aliases().lookup("京都").canonical == "Kyoto"
        assert aliases().lookup("Win11") is None
        assert load_yaml("en_words.yaml")["modals"]  # a file the directory lacks comes from memctl/data
        with pytest.raises(InputError, match="invalid lexicon YAML") as raised:
            load_yaml("gazetteer.yaml")
        assert raised.value.where.startswith(f"{tmp_path / 'gazetteer.yaml'}:2:")
    finally:
        use_directory(None)
    assert aliases().lookup("Win11").canonical == "Windows 11"
