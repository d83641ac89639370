"""Router signals on real pages, including the traps that must NOT flip a route."""

from __future__ import annotations

import dataclasses
import sys
import unicodedata

import pymupdf
import pytest

from ragtt.ingest import RouteThresholds
from ragtt.ingest.route import _CONTROL, decide, text_signals

from .conftest import pdf_dir


def page_text(name: str, page: int = 1) -> str:
    with pymupdf.open(pdf_dir() / name) as doc:
        return str(doc[page - 1].get_text())


def test_control_class_is_exactly_cc_cf_co_and_fffd_without_layout_whitespace() -> None:
    expected = {
        chr(cp)
        for cp in range(sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Co") and chr(cp) not in "\t\n\x0b\x0c\r"
    } | {"\ufffd"}
    found = set(_CONTROL.findall("".join(map(chr, range(sys.maxunicode + 1)))))
    # Unicode 15 (Python 3.12+) added Egyptian hieroglyph format controls; nothing else may differ.
    assert expected ^ found <= {chr(cp) for cp in range(0x13430, 0x13460)}, sorted(expected ^ found)[:10]


def test_table_with_a_few_c1_controls_is_not_flagged() -> None:
    signals = text_signals(page_text("docling__table_mislabeled_as_picture.pdf"))
    assert 0.01 < signals["control_ratio"] < RouteThresholds().max_control_ratio
    assert decide({**signals, "image_coverage": 0.0}, RouteThresholds())[0] is False


def test_layout_whitespace_is_not_control() -> None:
    assert text_signals("a\tb\nc\rd\x0be\x0cf")["control_ratio"] == 0.0
    assert text_signals("ab\x01\x02")["control_ratio"] == 0.5


@pytest.mark.parametrize(
    "name",
    [
        "udhr__udhr_Latn.VIE_Serif_12.pdf",
        "udhr__udhr_Arab.ARB_Sans_12.pdf",
        "udhr__udhr_Hans.CMN_Sans_12.pdf",
        "udhr__udhr_Jpan.JPN_Sans_12.pdf",
        "docling__normal_4pages.pdf",
        "docling__right_to_left_01.pdf",
        "pymupdf__chinese-tables.pdf",
    ],
)
def test_non_latin_scripts_are_valid_and_clean(name: str) -> None:
    signals = text_signals(page_text(name))
    assert signals["script_validity"] >= 0.98, signals
    assert signals["mojibake"] == 0.0 and signals["control_ratio"] < 0.01
    assert decide({**signals, "image_coverage": 0.0}, RouteThresholds()) == (
        False,
        f"clean text layer ({signals['chars']} chars)",
    )


def test_shifted_glyph_codes_are_mojibake_and_control_heavy() -> None:
    signals = text_signals(page_text("pdfjs__issue19802.pdf"))
    assert signals["control_ratio"] > 0.15
    assert signals["mojibake"] > 0.5
    reread, reason = decide({**signals, "image_coverage": 0.0}, RouteThresholds())
    assert reread and "control characters" in reason


def test_utf8_read_as_cp1252_is_mojibake_but_french_is_not() -> None:
    broken = "CafÃ© au lait, donâ€™t worry, naÃ¯ve rÃ©sumÃ©"
    assert text_signals(broken)["mojibake"] > 0.2
    assert decide(text_signals(broken), RouteThresholds())[0]
    french = "Le café « été » naïve résumé, Ôtez-vous, à l'école¸ déjà»"
    assert text_signals(french)["mojibake"] == 0.0


def test_letters_outside_known_scripts_lower_validity() -> None:
    signals = text_signals("ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ")  # Cherokee: real, but not a script we vouch for
    assert signals["script_validity"] == 0.0
    assert decide(signals, RouteThresholds())[0]


def test_short_clean_page_stays_and_short_symbol_soup_does_not() -> None:
    assert decide(text_signals(page_text("pdfjs__noembed-sjis.pdf")), RouteThresholds())[0] is False
    assert decide(text_signals("Page 3"), RouteThresholds())[0] is False
    assert decide(text_signals(page_text("pdfjs__TrueType_without_cmap.pdf")), RouteThresholds())[0] is True


def test_blank_page_stays_but_scan_and_outlined_text_do_not() -> None:
    blank = {**text_signals(""), "image_coverage": 0.0, "vector_curves": 2}
    assert decide(blank, RouteThresholds()) == (False, "blank page: no text, images or outlined text")
    assert decide({**blank, "image_coverage": 1.0}, RouteThresholds())[0]
    assert decide({**blank, "vector_curves": 1620}, RouteThresholds())[0]


def test_thresholds_are_the_users_to_move() -> None:
    signals = {**text_signals(page_text("docling__table_mislabeled_as_picture.pdf")), "image_coverage": 0.0}
    strict = dataclasses.replace(RouteThresholds(), max_control_ratio=0.01)
    assert decide(signals, strict)[0] is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        RouteThresholds().max_control_ratio = 1.0  # type: ignore[misc]
