"""Per-page routing: is a page's text layer good enough, or must it be read again?

Four orthogonal signals are measured on the text layer, plus facts about the page:

* ``chars``: non-whitespace characters;
* ``control_ratio``: Unicode Cc, Cf, Co and U+FFFD per character, EXCLUDING the C0 layout
  whitespace (tab, LF, VT, FF, CR) that every text layer carries by the line;
* ``script_validity``: the fraction of letters that belong to a recognised script
  (Latin incl. Vietnamese, Greek, Cyrillic, Arabic, Hebrew, Devanagari, Thai, CJK, kana,
  Hangul); 1.0 when there are no letters;
* ``mojibake``: the share of characters in already-decoded mojibake (UTF-8 read as
  Latin-1/cp1252, "Ã©", "â€™") or in shifted glyph-code garbage ("QJEJ\\x01...").

Page facts: ``image_coverage`` (share of the page under images, capped at 1),
``vector_curves`` (Bezier segments drawn, a sign of text drawn as outlines; measured only
when the text layer is thin, since it costs a pass over the drawings) and
``alnum_ratio`` (letters and digits per character, used on very short pages only).

Every threshold is a field of :class:`RouteThresholds` so a user can measure a corpus and
move them; :func:`decide` is pure, so a test or notebook can replay a decision.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

__all__ = ["RouteThresholds", "decide", "text_signals"]


@dataclass(frozen=True)
class RouteThresholds:
    """Where the router draws its lines. Measured on the test suite's PDF corpus (108 pages:
    born-digital, scanned and with broken fonts; the PDFs ``tests/ingest`` reads).

    max_control_ratio: above this, the layer is glyph codes, not text. A clean table with
        bullets drawn as C1 controls measured 0.021; broken fonts 0.18 to 1.0.
    min_script_validity: below this share of letters in recognised scripts, re-read.
    max_mojibake: above this share of characters in mojibake runs, re-read.
    short_page_chars / short_page_min_alnum: a page with fewer characters than this must be
        mostly letters and digits ("あいうえお" stays; an unmapped font's "’>in" does not).
    thin_chars: a text layer thinner than this is suspect when the page is a picture:
    scan_image_coverage: ...an image covering at least this share of the page.
    blank_image_coverage: a page with no text at all but images over at least this share
        of it is a scan; below it, a blank page stays on the (empty) text layer.
    vector_text_min_curves: a thin text layer over at least this many drawn Bezier
        segments is text drawn as outlines (measured: 1620 on such a page, 0 to 77 paths of
        rules and frames on table pages).
    """

    max_control_ratio: float = 0.08
    min_script_validity: float = 0.85
    max_mojibake: float = 0.05
    short_page_chars: int = 40
    short_page_min_alnum: float = 0.75
    thin_chars: int = 200
    scan_image_coverage: float = 0.9
    blank_image_coverage: float = 0.1
    vector_text_min_curves: int = 300


# C0/C1 controls without the layout whitespace, the Cf format characters, private use.
_CONTROL = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ufffd"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]"
)
_LETTER = re.compile(r"[^\W\d_]")
_SCRIPTS = (
    "A-Za-z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff\u2c60-\u2c7f"
    "\ua720-\ua7ff\ufb00-\ufb06\uff21-\uff3a\uff41-\uff5a"  # Latin, Vietnamese, ligatures
    "\u0370-\u03ff\u1f00-\u1fff"  # Greek
    "\u0400-\u052f"  # Cyrillic
    "\u0590-\u05ff\ufb1d-\ufb4f"  # Hebrew
    "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc"  # Arabic + presentation forms
    "\u0900-\u097f"  # Devanagari
    "\u0e00-\u0e7f"  # Thai
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002ffff"  # CJK
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # kana
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # Hangul
)
_VALID_LETTER = re.compile(rf"(?=[^\W\d_])[{_SCRIPTS}]")
_ALNUM = re.compile(r"[^\W_]")
_SPACE = re.compile(r"\s")
# UTF-8 lead byte then continuation bytes, as Latin-1/cp1252 shows them.
_CP1252_CONT = (
    "\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
    "\u2013\u2014\u2018-\u201a\u201c-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122"
)
_MOJIBAKE = re.compile(f"[\u00c2-\u00f4][{_CP1252_CONT}]+")
_LAYOUT_WS = "\t\n\x0b\x0c\r"


def text_signals(text: str) -> dict[str, Any]:
    """The four text signals (and ``alnum_ratio``) of one page's text layer."""
    chars = len(text) - len(_SPACE.findall(text))
    letters = len(_LETTER.findall(text))
    denominator = max(chars, 1)
    return {
        "chars": chars,
        "control_ratio": round(len(_CONTROL.findall(text)) / denominator, 4),
        "script_validity": round(len(_VALID_LETTER.findall(text)) / letters, 4) if letters else 1.0,
        "mojibake": round(_mojibake_chars(text) / denominator, 4),
        "alnum_ratio": round(len(_ALNUM.findall(text)) / denominator, 4),
    }


def _mojibake_chars(text: str) -> int:
    count = 0
    for match in _MOJIBAKE.finditer(text):
        run = match.group()
        try:  # Only a run that really re-decodes as UTF-8 counts: "é»" in French does not.
            run.encode("cp1252", errors="strict").decode("utf-8")
        except UnicodeError:
            try:
                run.encode("latin-1").decode("utf-8")
            except UnicodeError:
                continue
        count += len(run)
    return max(count, _shifted_chars(text))


def _shifted_chars(text: str) -> int:
    """Characters of text whose glyph codes were shifted by a constant (fonts without a
    ToUnicode map): the space then lands on a C0 control, which becomes the most common
    non-letter, and shifting everything back yields mostly lowercase letters and spaces."""
    controls = Counter(c for c in text if c < " " and c not in _LAYOUT_WS)
    if not controls:
        return 0
    space_code, hits = controls.most_common(1)[0]
    shift = 0x20 - ord(space_code)
    ascii_chars = [c for c in text if c < "\x80" and c not in _LAYOUT_WS]
    if hits < 0.05 * len(ascii_chars):
        return 0
    restored = sum(1 for c in ascii_chars if 0 <= ord(c) + shift < 0x80 and chr(ord(c) + shift) in _WORDISH)
    return len(ascii_chars) if restored >= 0.6 * len(ascii_chars) else 0


_WORDISH = frozenset("abcdefghijklmnopqrstuvwxyz ")


def decide(signals: dict[str, Any], thresholds: RouteThresholds) -> tuple[bool, str]:
    """``(reread, reason)`` for a page's signals; ``reread`` means the text layer is not
    to be trusted and another engine should read the page image."""
    t = thresholds
    chars = signals["chars"]
    coverage = signals.get("image_coverage", 0.0)
    curves = signals.get("vector_curves") or 0
    if chars == 0:
        if coverage >= t.blank_image_coverage:
            return True, f"no text layer; images cover {coverage:.0%} of the page"
        if curves >= t.vector_text_min_curves:
            return True, f"no text layer; {curves} drawn curves look like text as outlines"
        return False, "blank page: no text, images or outlined text"
    if signals["control_ratio"] > t.max_control_ratio:
        return True, f"control characters are {signals['control_ratio']:.1%} of the text layer"
    if signals["mojibake"] > t.max_mojibake:
        return True, f"mojibake is {signals['mojibake']:.1%} of the text layer"
    if signals["script_validity"] < t.min_script_validity:
        return True, f"only {signals['script_validity']:.0%} of letters are in a known script"
    if chars < t.short_page_chars and signals["alnum_ratio"] < t.short_page_min_alnum:
        return True, f"{chars} characters, mostly symbols: a font without a Unicode map"
    if chars < t.thin_chars and coverage >= t.scan_image_coverage:
        return True, f"thin text layer ({chars} chars) over an image covering {coverage:.0%}: a scan"
    if chars < t.thin_chars and curves >= t.vector_text_min_curves:
        return True, f"thin text layer ({chars} chars) beside {curves} drawn curves: outlined text"
    return False, f"clean text layer ({chars} chars)"
