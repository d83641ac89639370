"""Which of Lance's messages naming a table's folder mean a damaged project: I/O, missing
files, decoding and corruption do; a bad argument or a busy store ("invalid", "error",
"unexpected") does not, and is raised as it came rather than as "restore from a backup"."""

from __future__ import annotations

import pytest

from ragtt.damage import index_damage

WHERE = "/p/lancedb/chunks.lance"


@pytest.mark.parametrize(
    "message",
    [
        "LanceError(IO): LocalFileSystem: No such file or directory: /p/lancedb/chunks.lance/data/a.lance",
        "LanceError(IO): failed to decode page in /p/lancedb/chunks.lance/data/a.lance",
        "Corrupt file /p/lancedb/chunks.lance/_versions/3.manifest",
        "Unexpected EOF reading /p/lancedb/chunks.lance/data/b.lance",
        # Lance's decoder on overwritten bytes: it names its own source, not the file
        "External error: Encountered corrupt file variable_full_zip: item length 2108287620 exceeds the 536 "
        "byte(s) remaining in the page buffer, /home/runner/work/lance/lance/rust/lance-encoding/src/encodings/"
        "logical/primitive/fullzip_decode.rs:995:40",
        "External error: Invalid user input: Invalid RLE values buffer size, "
        "/home/runner/work/lance/lance/rust/lance-encoding/src/encodings/physical/rle.rs:1823:24",
    ],
)
def test_unreadable_files_are_damage(message: str) -> None:
    assert index_damage(WHERE, message) is not None


@pytest.mark.parametrize(
    "message",
    [
        "Invalid user input: column 'vectorr' not in schema of /p/lancedb/chunks.lance",
        "LanceError(Internal): error: commit conflict on /p/lancedb/chunks.lance, retry",
        "unexpected filter expression for /p/lancedb/chunks.lance: source =",
        "Invalid user input: Invalid RLE values buffer size",  # not from Lance's decoder: not the index's bytes
    ],
)
def test_bad_arguments_and_busy_stores_are_not_damage(message: str) -> None:
    assert index_damage(WHERE, message) is None
