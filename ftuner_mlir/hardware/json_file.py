"""Target files: one JSON object read with every failure as a ValueError naming the file."""
from __future__ import annotations

import json
from pathlib import Path


def read_json_object(path, what: str) -> dict:
    """The object in `path`; a ValueError for a missing or unreadable file, bytes that are not UTF-8,
    text that is not JSON (or nests too deep for the decoder), or JSON that is not an object."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        reason = "it nests too deeply" if isinstance(err, RecursionError) else err
        raise ValueError(f"cannot read {what} file {path}: {reason}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} file {path}: expected a JSON object of fields, got {type(data).__name__}")
    return data
