"""Issue 15.3: text sources in any encoding, on real text from the corpora."""

from __future__ import annotations

import codecs
from pathlib import Path

import pymupdf
import pytest

import ragtt
from ragtt.errors import IngestError
from ragtt.ingest.loaders import decode
from tests.conftest import corpus, flask_releases


def _pdf_text(name: str) -> str:
    with pymupdf.open(corpus("pdfs", name)) as doc:
        return "".join(page.get_text() for page in doc)


README = (flask_releases()[-1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("bom", "codec", "name"),
    [
        (b"", "utf-8", "utf-8"),
        (codecs.BOM_UTF8, "utf-8", "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16"),
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32-be", "utf-32"),
    ],
)
def test_unicode_with_or_without_a_bom_decodes_silently(bom: bytes, codec: str, name: str) -> None:
    for text in (README, _pdf_text("udhr__udhr_Hans.CMN_Sans_12.pdf")):
        decoded = decode(bom + text.encode(codec), "x.md")
        assert decoded.text == text.replace("\r\n", "\n") and decoded.encoding == name and decoded.warning is None


@pytest.mark.parametrize(
    ("pdf", "codec", "detected"),
    [
        ("udhr__udhr_Jpan.JPN_Sans_12.pdf", "shift_jis", "cp932"),
        ("udhr__udhr_Hans.CMN_Sans_12.pdf", "gb18030", "gb18030"),
    ],
)
def test_legacy_encodings_are_detected_and_named_in_the_report(
    tmp_path: Path, pdf: str, codec: str, detected: str
) -> None:
    text = _pdf_text(pdf)
    path = tmp_path / "docs" / "udhr.txt"
    path.parent.mkdir()
    path.write_bytes(text.encode(codec))
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        report = proj.ingest(path)
        assert report.documents_added == ["udhr.txt"] and report.failed == []
        assert [(s, detected in w and "charset-normalizer" in w) for s, w in report.warnings] == [("udhr.txt", True)]
        assert proj.document("udhr.txt").text == text.replace("\r\n", "\n")
        assert "WARNING udhr.txt: not UTF-8" in repr(report)


def test_binary_stays_refused(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "scan.txt").write_bytes(corpus("pdfs", "pypdf__crazyones.pdf").read_bytes())
    (docs / "fake-utf16.txt").write_bytes(codecs.BOM_UTF16_LE + b"\x00\x00\x00\x00")
    (docs / "ok.md").write_text(README, encoding="utf-8")
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        report = proj.ingest(docs)
    reasons = dict(report.failed)
    assert report.documents_added == ["ok.md"]
    assert "binary" in reasons["scan.txt"] and "binary" in reasons["fake-utf16.txt"]
    with pytest.raises(IngestError, match="binary"):
        decode(bytes(range(256)) * 4, "noise.bin")  # NUL bytes
    with pytest.raises(IngestError, match="not text in any encoding"):
        decode(bytes(range(1, 256)) * 4, "noise.bin")  # no NUL: charset-normalizer finds no encoding


def test_a_file_is_decoded_a_piece_at_a_time_across_every_boundary(tmp_path: Path) -> None:
    """A text file is read a megabyte at a time (ragtt.ingest.loaders.decode_stream): a
    multi-byte character or a "\\r\\n" cut by a piece's end decodes as if read whole."""
    step = 1 << 20
    text = "x" * (step - 1) + "漢" + "y" * (step - 1) + "\r\n" + "z" * (step - 2) + "🙂é\r\nend"
    raw = text.encode("utf-8")
    assert raw[step - 1 : step + 2] == "漢".encode() and raw.index(b"\r\n") == 2 * step + 1
    for data in (raw, codecs.BOM_UTF16_LE + text.encode("utf-16-le")):
        assert decode(data, "big.txt").text == text.replace("\r\n", "\n")
    bad = raw[: 2 * step + 5] + b"\xff" + raw[2 * step + 5 :]
    path = tmp_path / "docs" / "big.txt"
    path.parent.mkdir()
    path.write_bytes(raw)
    with ragtt.Project.open(tmp_path / "p", embedder=ragtt.HashEmbedder(), progress=False) as proj:
        assert proj.ingest(path).failed == []
        assert proj.document("big.txt").text == text.replace("\r\n", "\n") and proj.verify().ok
    with pytest.raises(IngestError, match=f"offset {2 * step + 5}"):
        decode(codecs.BOM_UTF8 + bad[3:], "bad.txt")
