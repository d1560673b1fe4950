"""Dates of every input format, normalized to ISO 8601."""

import pytest

from memctl.ingest import dates


@pytest.mark.parametrize("text, iso", [
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
    ("12:06 am on 11 November, 2022", "2022-11-11T00:06:00"),
    ("12:30 pm on 1 Jan, 2020", "2020-01-01T12:30:00"),
    ("9:27 AM on 7 February 2022", "2022-02-07T09:27:00"),
])
def test_locomo_dates(text, iso):
    assert dates.parse_locomo(text) == iso


@pytest.mark.parametrize("text, iso", [
    ("2024年04月01日 周一", "2024-04-01"),
    ("2024年04月01日 周一 08:51", "2024-04-01T08:51:00"),
    ("2024年4月1日", "2024-04-01"),
    ("2024年4月1号 星期一 8:05", "2024-04-01T08:05:00"),
])
def test_chinese_dates(text, iso):
    assert dates.parse_chinese(text) == iso


@pytest.mark.parametrize("value, iso", [
    ("2025-09-15 10:35", "2025-09-15T10:35:00"),
    ("2025/09/15 10:35:12", "2025-09-15T10:35:12"),
    ("2025-09-15T10:35:00Z", "2025-09-15T10:35:00+00:00"),
    ("2025-09-15T10:35:00+08:00", "2025-09-15T10:35:00+08:00"),
    ("2025-09-15", "2025-09-15"),
    (1700000000, "2023-11-14T22:13:20+00:00"),
    (1700000000123, "2023-11-14T22:13:20.123000+00:00"),
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
])
def test_timestamps(value, iso):
    assert dates.parse_timestamp(value) == iso


@pytest.mark.parametrize("value, reason", [
    ("13:00 pm on 8 May, 2023", "hour 13 is not on a 12-hour clock"),
    ("1:56 pm on 30 February, 2023", "day is out of range for month"),
    ("1:56 pm on 8 Maybe, 2023", "unknown month 'Maybe'"),
])
def test_bad_locomo_dates(value, reason):
    with pytest.raises(ValueError, match=reason):
        dates.parse_locomo(value)


@pytest.mark.parametrize("value", ["yesterday", True, None, [2024], 1e30])
def test_bad_timestamps(value):
    with pytest.raises(ValueError):
        dates.parse_timestamp(value)
