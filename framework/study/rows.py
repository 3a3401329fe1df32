"""A study's rows: their columns and types, their identity, and reading them back.

A row is one measurement (dataset x variant x repeat, and vocabulary size in a sweep). In results.jsonl numbers are numbers and
``config``, ``versions`` and ``machine`` are objects; the CSV flattens those into dotted columns
(``config.coder.name``, ``machine.cpu``). Rows written by older versions (numbers as text,
objects as JSON text) are read into the same types.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError

#: the tokenizer metrics of a row, on its dataset (columns) and on each held-out text (the
#: ``held_out`` object, by text name): those of ``chunkpress evaluate``
TOKEN_COLUMNS = ("tokens", "bytes_per_token", "chars_per_token", "tokens_per_word", "renyi_efficiency",
                 "shannon_efficiency", "vocab_used", "code_length_bits")
INT_COLUMNS = ("repeat", "vocab_size", "original_bytes", "archive_bytes", "header_bytes", "payload_bytes", "rules",
               "deleted", "dictionary_size", "symbols", "peak_rss_bytes", "tokens", "vocab_used", "code_length_bits")
FLOAT_COLUMNS = ("dictionary_bytes", "string_bytes", "bits_per_byte", "factor", "learn_seconds",
                 "encode_seconds", "decode_seconds", "bytes_per_token", "chars_per_token", "tokens_per_word",
                 "renyi_efficiency", "shannon_efficiency")
OBJECT_COLUMNS = ("config", "versions", "machine", "held_out")
COLUMNS = (
    "study", "dataset", "trained_on", "variant", "vocab_size", "repeat", "scorer", "rewriter", "coder", "pretokenizer",
    "original_bytes", "archive_bytes", "header_bytes", "payload_bytes", "dictionary_bytes",
    "string_bytes", "bits_per_byte", "factor", "rules", "deleted", "dictionary_size", "symbols",
    *TOKEN_COLUMNS, "learn_seconds", "encode_seconds", "decode_seconds", "peak_rss_bytes", "verified",
    "config_hash", "input_blake2b", "config", "versions", "machine", "held_out", "error",
)


def new_row(**values) -> dict:
    row: dict = {c: None for c in COLUMNS}
    row["error"] = ""
    row.update(values)
    return row


def _number(value, kind):
    if value is None or isinstance(value, bool) or value == "":
        return None
    try:
        number = kind(float(value)) if kind is int else kind(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number == number else None  # NaN: none


def _object(value):
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def normalized(raw: dict) -> dict:
    """A row with every column in its type (None where absent or unreadable)."""
    row = new_row()
    for column in COLUMNS:
        value = raw.get(column)
        if column in INT_COLUMNS:
            row[column] = _number(value, int)
        elif column in FLOAT_COLUMNS:
            row[column] = _number(value, float)
        elif column in OBJECT_COLUMNS:
            row[column] = _object(value)
        elif column == "verified":
            row[column] = value is True or value == "True"
        elif column == "error":
            row[column] = str(value) if value else ""
        else:
            row[column] = value if isinstance(value, str) else (None if value is None else str(value))
    return row


def row_key(row: dict) -> tuple:
    """What makes a row the same measurement: the cell, the config, the input and the code."""
    versions = row.get("versions") or {}
    return (row["dataset"], row["variant"], row.get("vocab_size"), row["repeat"], row["config_hash"],
            row.get("input_blake2b") or "", versions.get("chunkpress") or "")


def read_rows(path: Path) -> Iterator[tuple[tuple, dict]]:
    """(key, row) for every readable row of a results.jsonl. A line that is not a row (cut short
    by an interrupted run, not UTF-8, not an object, nested past reason, missing a column) is
    skipped here (:func:`unreadable_lines` lists them): a results file is data from elsewhere,
    never a reason for a traceback."""
    for _, row in _parsed_lines(path):
        if row is not None:
            yield row_key(row), row


def unreadable_lines(path: Path) -> list[tuple[int, bytes]]:
    """(line number from 1, the line) of every non-blank line of a results.jsonl that is not a
    row: what a rewrite of the file must keep."""
    return [(number, line) for number, (line, row) in enumerate(_parsed_lines(path), 1)
            if row is None and line.strip()]


def _parsed_lines(path: Path) -> Iterator[tuple[bytes, dict | None]]:
    """Each line of ``path`` with its row (None: not a row)."""
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    for line in raw.splitlines():
        yield line, _row(line)


def _row(line: bytes) -> dict | None:
    try:
        found = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or not all(isinstance(found.get(c), str) for c in ("dataset", "variant")):
        return None
    if "versions" in found and found["versions"] not in ("", None) and _object(found["versions"]) is None:
        return None  # versions that are not an object: not one of our rows
    row = normalized(found)
    if row["repeat"] is None or not row["config_hash"]:
        return None
    return row


def to_json_line(row: dict) -> str:
    return json.dumps(row, default=str) + "\n"


def _flat(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(f"{prefix}.{key}", inner, out)
    else:
        out[prefix] = value


def to_csv(rows: list[dict]) -> str:
    """The rows as CSV: plain columns first, then each object column flattened (dotted names,
    the union over all rows)."""
    flat_rows = []
    extra: dict = {}
    for row in rows:
        flat = {c: row.get(c) for c in COLUMNS if c not in OBJECT_COLUMNS}
        for column in OBJECT_COLUMNS:
            nested: dict = {}
            _flat(column, row.get(column) or {}, nested)
            flat.update(nested)
            extra.update(dict.fromkeys(nested))
        flat_rows.append(flat)
    names = [c for c in COLUMNS if c not in OBJECT_COLUMNS] + list(extra)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=names, restval="")
    writer.writeheader()
    writer.writerows(flat_rows)
    return buf.getvalue()
