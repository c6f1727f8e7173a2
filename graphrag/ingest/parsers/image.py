"""Uploaded pictures (PNG, JPEG, TIFF) to OCR'd pages: one page per frame of the file."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator

from PIL import Image, ImageOps, ImageSequence

from graphrag.errors import CorruptFileError, DecodeBudgetError
from graphrag.ingest.models import (
    FileType,
    ImageSource,
    PageProgress,
    ParsedDocument,
    ParsedPage,
)
from graphrag.ingest.parsers.captioning import Captioner
from graphrag.ingest.parsers.decode_budgets import check_pixels
from graphrag.ingest.parsers.image_reading import read_image
from graphrag.settings import IngestSettings

__all__ = ["parse_image"]

_FULL_COVERAGE = 1.0


def _open(data: bytes) -> Image.Image:
    """The image with only its header read; our own pixel budget, not Pillow's warning, decides."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        return Image.open(io.BytesIO(data))


def _frames_as_png(data: bytes, settings: IngestSettings) -> Iterator[bytes]:
    """Each frame upright (EXIF orientation applied), at most `ocr_max_pixels`, encoded as PNG.

    A frame's declared size is checked against the pixel budget before it is decoded.
    """
    max_pixels = settings.ocr_max_pixels
    with _open(data) as image:
        for frame in ImageSequence.Iterator(image):
            check_pixels(frame.width, frame.height, settings, "an image frame")
            upright = ImageOps.exif_transpose(frame.convert("RGB"))
            if upright.width * upright.height > max_pixels:
                scale = (max_pixels / (upright.width * upright.height)) ** 0.5
                upright.thumbnail((int(upright.width * scale), int(upright.height * scale)))
            buffer = io.BytesIO()
            upright.save(buffer, format="PNG")
            yield buffer.getvalue()


def _frame_count(data: bytes) -> int:
    """Frames announced by the file (TIFF pages); 1 when the header cannot say."""
    try:
        with _open(data) as image:
            return int(getattr(image, "n_frames", 1))
    except (Image.DecompressionBombError, OSError, ValueError, EOFError):
        return 1  # decoding the frames reports the real problem


def _decoded_frames(data: bytes, file_type: FileType, settings: IngestSettings) -> Iterator[bytes]:
    """The frames of `_frames_as_png`, with decoding failures reported as a corrupt file."""
    frames = _frames_as_png(data, settings)
    while True:
        try:
            png = next(frames)
        except StopIteration:
            return
        except Image.DecompressionBombError as exc:
            raise DecodeBudgetError(f"the {file_type.value} image is too large: {exc}") from exc
        except (OSError, ValueError, EOFError) as exc:
            raise CorruptFileError(f"the {file_type.value} image cannot be decoded: {exc}") from exc
        yield png


def parse_image(
    data: bytes,
    file_type: FileType,
    settings: IngestSettings,
    captioner: Captioner | None = None,
    on_page: PageProgress | None = None,
) -> ParsedDocument:
    """OCR every frame of an image file; each frame is a scanned page numbered from 1."""
    pages: list[ParsedPage] = []
    total = _frame_count(data)
    if total > settings.tiff_max_frames:
        raise DecodeBudgetError(
            f"the {file_type.value} image has {total} frames (at most {settings.tiff_max_frames})"
        )
    for number, png in enumerate(_decoded_frames(data, file_type, settings), 1):
        image = read_image(png, ImageSource.IMAGE_FILE, settings, captioner)
        pages.append(
            ParsedPage(number=number, images=[image], scanned=True, image_coverage=_FULL_COVERAGE)
        )
        if on_page is not None:
            on_page(number, max(total, number))
    return ParsedDocument(file_type=file_type, pages=pages)
