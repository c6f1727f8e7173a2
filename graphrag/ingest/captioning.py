"""The seam for image captions: a vision model describes an image; ingestion stores the text.

Captions are produced only when a `Captioner` is handed to the parsers (built from
`settings.ingest.vision_model` by whoever wires the pipeline); without one, no caption chunks.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Captioner"]


class Captioner(Protocol):
    """Describes one image in words, e.g. through an OpenAI-compatible vision model."""

    def caption(self, image: bytes, *, media_type: str) -> str:
        """A short description of `image` (encoded bytes of `media_type`, e.g. image/png)."""
        ...
