"""Reading a gazetteer CSV file (contract "Geocoding and resolve-zone"): each row checked, each
problem reported with its line number, nothing written here.

The file is UTF-8 (a BOM is allowed) with a header naming `address`, `lat` and `lng` (and
optionally `postal_code` and `locality`, or their aliases). Python's csv module parses it with a
per-field limit far below its default (131,072 characters), so a huge field is a reported
problem of its line, never an exception that ends the import. Bytes that are not UTF-8 are
decoded as lone surrogates (`surrogateescape`) and reported by line, not raised.
"""

import csv
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from delivery.fields import has_line_breaking, parse_query_number
from zones.models import Place

#: the columns of a gazetteer CSV file; `address`, `lat` and `lng` are required
PLACE_COLUMNS = ("address", "postal_code", "locality", "lat", "lng")
REQUIRED_COLUMNS = ("address", "lat", "lng")
TEXT_COLUMNS = ("address", "postal_code", "locality")
COLUMN_ALIASES = {
    "postcode": "postal_code",
    "zip": "postal_code",
    "postalcode": "postal_code",
    "city": "locality",
    "latitude": "lat",
    "lon": "lng",
    "long": "lng",
    "longitude": "lng",
}
#: the longest field the csv module reads; the longest column (address) holds 500 characters
FIELD_SIZE_LIMIT = 4096
COORDINATE_BOUNDS = {"lat": 90, "lng": 180}

_UNDECODABLE = range(0xDC80, 0xDD00)  # surrogateescape's stand-ins for bytes that are not UTF-8


def max_length(column: str) -> int:
    """The most characters a text column holds: its model field's max_length."""
    return Place._meta.get_field(column).max_length


@dataclass(frozen=True)
class PlaceRow:
    line: int
    address: str
    postal_code: str
    locality: str
    lat: float
    lng: float


@dataclass(frozen=True)
class RowProblem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


_field_limit_lock = threading.Lock()


@contextmanager
def _field_size_limit(limit: int):
    """csv's field limit is the interpreter's; set it while a file is read (worker threads may
    read two at once: the lock keeps one from restoring the default under the other)."""
    with _field_limit_lock:
        previous = csv.field_size_limit(limit)
        try:
            yield
        finally:
            csv.field_size_limit(previous)


def _is_undecodable(text: str) -> bool:
    return any(ord(char) in _UNDECODABLE for char in text)


def _header(names: list[str]) -> tuple[list[str], str | None]:
    """The header's columns (aliases resolved) and what is wrong with it, if anything."""
    if not names or names == [""]:
        return [], "the file is empty: the first line must be the header"
    if any(_is_undecodable(name) or "\x00" in name for name in names):
        return [], "the file is not CSV text in UTF-8"
    columns = [COLUMN_ALIASES.get(name.strip().lower(), name.strip().lower()) for name in names]
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        return columns, (
            f"CSV header must name the columns {', '.join(PLACE_COLUMNS)} (postal_code and "
            f"locality may be left out); missing: {', '.join(missing)}"
        )
    repeated = sorted(
        {name for name in columns if name in PLACE_COLUMNS and columns.count(name) > 1}
    )
    if repeated:
        return columns, f"CSV header names {', '.join(repeated)} more than once"
    return columns, None


def _coordinate(text: str, column: str) -> float | None:
    """A plain decimal number within the column's bounds; `1e1`, `nan`, `inf`, `1_0` are not."""
    value = parse_query_number(text.strip(" "))
    bound = COORDINATE_BOUNDS[column]
    if value is None or not -bound <= value <= bound:
        return None
    return value


def _check(line: int, values: dict[str, str]) -> tuple[PlaceRow | None, list[str]]:
    problems = []
    texts = {}
    for column in TEXT_COLUMNS:
        text = values.get(column, "").strip(" ")
        if "\x00" in text:
            problems.append(f"{column} contains a NUL character")
        elif has_line_breaking(text):
            problems.append(f"{column} must not contain control characters or line breaks")
        if len(text) > max_length(column):
            problems.append(f"{column} must be at most {max_length(column)} characters")
        texts[column] = text
    if not texts["address"]:
        problems.append("address must not be empty")
    coordinates = {}
    for column, bound in COORDINATE_BOUNDS.items():
        coordinates[column] = _coordinate(values.get(column, ""), column)
        if coordinates[column] is None:
            problems.append(f"{column} must be a number between -{bound} and {bound}")
    if problems:
        return None, problems
    return PlaceRow(line=line, **texts, **coordinates), []


def places_read(stream: BinaryIO) -> Iterator[PlaceRow | RowProblem]:
    """Every data row of a gazetteer CSV file, each a PlaceRow or one RowProblem per thing wrong
    with it, in file order. A header that cannot be used is one problem (line 1) and the end."""
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    try:
        with _field_size_limit(FIELD_SIZE_LIMIT):
            yield from _rows(csv.reader(text))
    finally:
        text.detach()  # the caller closes its own stream


def _rows(reader) -> Iterator[PlaceRow | RowProblem]:
    try:
        first = next(reader, [])
    except csv.Error as exc:
        yield RowProblem(1, f"the header is not CSV text ({exc})")
        return
    columns, wrong = _header(first)
    if wrong is not None:
        yield RowProblem(1, wrong)
        return
    while True:
        line = reader.line_num + 1  # a record's first line (a quoted line break spans more)
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield RowProblem(line, _csv_problem(exc))
            continue
        if not fields or fields == [""]:
            continue  # a blank line
        if any(_is_undecodable(value) for value in fields):
            yield RowProblem(line, "is not UTF-8 text")
            continue
        if len(fields) != len(columns):
            yield RowProblem(line, f"has {len(fields)} fields, the header has {len(columns)}")
            continue
        place, problems = _check(line, dict(zip(columns, fields, strict=True)))
        if place is not None:
            yield place
        for problem in problems:
            yield RowProblem(line, problem)


def _csv_problem(exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return f"a field is longer than {FIELD_SIZE_LIMIT} characters"
    return f"is not valid CSV ({exc})"
