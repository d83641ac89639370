"""The engines that read a page again when its text layer cannot be trusted.

``text`` is PyMuPDF's text layer (always there). ``ocr`` is Tesseract through PyMuPDF,
``vision`` a litellm vision model. :func:`resolve_engines` decides, once per parse, which
re-read engines can run: an engine the user named explicitly and that cannot run is a
``ConfigError`` at once, naming it; in automatic mode an absent engine is skipped and
the pages that needed it say so in the warnings.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtt._lazy import import_litellm
from ragtt.errors import ConfigError
from ragtt.ingest.types import IngestOptions

if TYPE_CHECKING:
    import pymupdf

__all__ = ["ENGINES", "OcrResult", "resolve_engines", "run_ocr", "run_vision"]

ENGINES = ("text", "ocr", "vision")
REREAD_ENGINES = ("ocr", "vision")

VISION_PROMPT = (
    "Transcribe this document page into GitHub-flavoured Markdown. Keep the reading order, "
    "headings, lists and tables. Output only the Markdown, with no commentary."
)


def resolve_engines(options: IngestOptions) -> tuple[tuple[str, ...], dict[str, str]]:
    """``(usable re-read engines in preference order, {absent engine: why})``.

    Raises ConfigError for an engine named in ``options.engines`` that cannot run.
    """
    explicit = options.engines is not None
    wanted = tuple(options.engines) if options.engines is not None else REREAD_ENGINES
    unknown = [name for name in wanted if name not in ENGINES]
    if unknown:
        raise ConfigError(f"unknown PDF engine(s) {unknown}; choose from {list(ENGINES)}")
    usable: list[str] = []
    absent: dict[str, str] = {}
    for name in wanted:
        if name == "text":
            continue
        why = ocr_unavailable(options.ocr_languages) if name == "ocr" else vision_unavailable(options)
        if why is None:
            usable.append(name)
        elif explicit:
            raise ConfigError(f"PDF engine {name!r} is configured but cannot run: {why}")
        else:
            absent[name] = why
    return tuple(usable), absent


def ocr_unavailable(languages: str) -> str | None:
    """Why Tesseract OCR cannot run for these languages, or None when it can."""
    folder = tessdata_dir()
    if folder is None:
        return (
            "Tesseract's language data was not found; install it (apt-get install tesseract-ocr "
            "tesseract-ocr-eng) or set TESSDATA_PREFIX"
        )
    missing = [lang for lang in languages.split("+") if not (Path(folder) / f"{lang}.traineddata").exists()]
    if missing:
        return f"no Tesseract data for language(s) {missing} in {folder}; install tesseract-ocr-<lang>"
    return None


def vision_unavailable(options: IngestOptions) -> str | None:
    if not options.vision_model:
        return "no vision_model is set in IngestOptions"
    try:
        import_litellm()
    except ImportError:
        return "litellm is not installed (pip install 'ragtt[llm]')"
    return None


_TESSDATA: list[str | None] = []


def tessdata_dir() -> str | None:
    if not _TESSDATA:  # PyMuPDF's lookup shells out; do it once per process
        import pymupdf

        try:
            _TESSDATA.append(os.environ.get("TESSDATA_PREFIX") or pymupdf.get_tessdata())
        except RuntimeError:
            _TESSDATA.append(None)
    return _TESSDATA[0]


@dataclass(frozen=True)
class OcrResult:
    """Tesseract's text of a page, as a PyMuPDF dict, and the matrix that maps its
    coordinates back to the unrotated page frame."""

    page_dict: dict[str, Any]
    to_page: pymupdf.Matrix
    turned: int  # degrees the image was turned to stand upright (orientation detection)


def run_ocr(page: pymupdf.Page, languages: str, dpi: int = 150) -> OcrResult:
    """OCR the page as a viewer shows it, turned upright first when Tesseract's
    orientation detection says the scan itself lies sideways or upside down.

    PyMuPDF's own ``get_textpage_ocr`` reads the UNROTATED page, which is unreadable for
    a page displayed through /Rotate; rendering the displayed page and mapping the boxes
    back avoids that.
    """
    import pymupdf

    zoom = dpi / 72
    scale = pymupdf.Matrix(zoom, zoom)
    turned = _orientation(page.get_pixmap(matrix=scale))
    render = scale * pymupdf.Matrix(turned) if turned else scale
    pix = page.get_pixmap(matrix=render)
    pix.set_dpi(dpi, dpi)
    with pymupdf.open("pdf", pix.pdfocr_tobytes(language=languages, tessdata=tessdata_dir())) as ocr:
        page_dict = ocr[0].get_text("dict", flags=pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES)
    # OCR points -> pixels of the rendering -> displayed page -> unrotated page.
    to_page = pymupdf.Matrix(zoom, 0, 0, zoom, pix.x, pix.y) * ~(page.rotation_matrix * render)
    return OcrResult(page_dict, to_page, turned)


_ROTATE = re.compile(r"^Rotate:\s*(\d+)", re.MULTILINE)


def _orientation(pix: pymupdf.Pixmap) -> int:
    """Degrees (clockwise) that make the rendered page upright, by Tesseract's OSD; 0
    when the ``tesseract`` command or its osd data is missing, or the page has too little
    text to tell (OSD is an improvement, never a requirement)."""
    folder = tessdata_dir()
    exe = shutil.which("tesseract")
    if exe is None or folder is None or not (Path(folder) / "osd.traineddata").exists():
        return 0
    try:
        done = subprocess.run(
            [exe, "stdin", "stdout", "--psm", "0", "--tessdata-dir", folder],
            input=pix.tobytes("png"),
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    found = _ROTATE.search(done.stdout.decode("utf-8", "replace"))
    return int(found.group(1)) % 360 if done.returncode == 0 and found else 0


def run_vision(page: pymupdf.Page, options: IngestOptions, zoom: float = 1.5) -> str:
    """The page image in, Markdown out, through litellm (import deferred: about 2 s)."""
    import pymupdf

    litellm = import_litellm()

    png = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom)).tobytes("png")
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    response = litellm.completion(
        model=options.vision_model,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": VISION_PROMPT},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
        ],
        **dict(options.vision_kwargs),
    )
    content = response.choices[0].message.content  # type: ignore[union-attr]
    return str(content or "")
