"""Text from pixels with Tesseract: one image in, its text (or why there is none) out."""

from __future__ import annotations

import io
import logging

import pytesseract
from PIL import Image
from pydantic import BaseModel

from graphrag.errors import CorruptFileError, ServiceUnavailableError
from graphrag.ingest.parsers.text_decoding import clean_text

__all__ = ["OcrResult", "ocr_image"]

logger = logging.getLogger(__name__)


class OcrResult(BaseModel):
    """The recognised text; `failed` with a reason when Tesseract timed out or errored."""

    model_config = {"frozen": True}

    text: str = ""
    failed: bool = False
    reason: str | None = None


def _load(image: bytes) -> Image.Image:
    try:
        loaded: Image.Image = Image.open(io.BytesIO(image))
        loaded.load()
    except (Image.DecompressionBombError, OSError, ValueError) as exc:
        raise CorruptFileError(f"the image cannot be decoded: {exc}") from exc
    # Tesseract reads grey and RGB; palette, CMYK and alpha images are flattened first.
    if loaded.mode not in ("L", "RGB"):
        loaded = loaded.convert("RGB")
    return loaded


def ocr_image(image: bytes, *, languages: str, timeout_s: float) -> OcrResult:
    """Run Tesseract on one encoded image (PNG, JPEG, TIFF frame...).

    A timeout or a Tesseract error is a result (`failed=True`), not an exception, so a single
    bad image never sinks the document. Undecodable bytes raise CorruptFileError; a missing
    Tesseract binary raises ServiceUnavailableError.
    """
    loaded = _load(image)
    try:
        raw = pytesseract.image_to_string(loaded, lang=languages, timeout=timeout_s)
    except pytesseract.TesseractNotFoundError as exc:
        raise ServiceUnavailableError("tesseract is not installed or not on PATH") from exc
    except RuntimeError as exc:
        # pytesseract raises TesseractError (a RuntimeError) on failure and a bare
        # RuntimeError when it kills the process at the timeout.
        logger.warning("OCR failed on a %sx%s image: %s", loaded.width, loaded.height, exc)
        return OcrResult(failed=True, reason=str(exc))
    return OcrResult(text=clean_text(str(raw)).strip())
