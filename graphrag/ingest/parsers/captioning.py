"""Image captions: a vision model describes an image; ingestion stores the text.

Captions are produced only when a `Captioner` is handed to the parsers. `build_captioner` makes
one per document from `settings.ingest.vision_model`: an OpenAI-compatible chat request to the
LLM server (`llm.base_url`) whose user message holds the prompt and the image as a base64 data
URL. Its budgets are settings: images per document, tokens and seconds per caption. A caption
is a bonus to the OCR: one that fails (server down, refusal, time-out) leaves its image
uncaptioned and is counted, never failing the document.
"""

from __future__ import annotations

import base64
import logging
from typing import Any, Protocol

import openai
from openai import OpenAI

from graphrag.ingest.models import CaptionStats
from graphrag.llm.prompts import load_prompt
from graphrag.settings import Settings

__all__ = ["CAPTION_PROMPT", "Captioner", "VisionCaptioner", "build_captioner", "data_url"]

log = logging.getLogger(__name__)

CAPTION_PROMPT = "caption_image"


class Captioner(Protocol):
    """Describes one image in words, e.g. through an OpenAI-compatible vision model."""

    def caption(self, image: bytes, *, media_type: str) -> str | None:
        """A short description of `image` (encoded bytes of `media_type`, e.g. image/png);
        None when there is none (budget spent, the model failed)."""
        ...


def data_url(image: bytes, media_type: str) -> str:
    """The image inline, as OpenAI's vision messages take it."""
    return f"data:{media_type};base64,{base64.b64encode(image).decode('ascii')}"


class VisionCaptioner:
    """Captions through the vision model, at most `caption_max_images` for one document."""

    def __init__(self, settings: Settings, model: str) -> None:
        self._ingest = settings.ingest
        self._temperature = settings.llm.temperature
        self._model = model
        prompt = load_prompt(CAPTION_PROMPT, settings.extraction.prompt_templates_dir).render()
        self._prompt = prompt.user or ""
        self._client = OpenAI(
            base_url=settings.llm.base_url,
            api_key=settings.llm.api_key.get_secret_value(),
            timeout=self._ingest.caption_timeout_s,
            max_retries=0,  # a caption is not worth holding the document up
        )
        self.stats = CaptionStats()

    def _message(self, image: bytes, media_type: str) -> dict[str, Any]:
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": self._prompt},
                {"type": "image_url", "image_url": {"url": data_url(image, media_type)}},
            ],
        }

    def caption(self, image: bytes, *, media_type: str) -> str | None:
        """The model's description of the image, cut to `caption_max_chars`; None past the
        budget or when the request fails."""
        if self.stats.captioned + self.stats.failed >= self._ingest.caption_max_images:
            self.stats.skipped += 1
            return None
        try:
            completion = self._client.chat.completions.create(
                model=self._model,
                messages=[self._message(image, media_type)],  # type: ignore[list-item]  # typed parts as a dict
                temperature=self._temperature,
                max_tokens=self._ingest.caption_max_tokens,
            )
        except openai.OpenAIError as exc:
            self.stats.failed += 1
            log.warning("image caption failed (%s): %s", self._model, exc)
            return None
        text = completion.choices[0].message.content if completion.choices else None
        if not text or not text.strip():
            self.stats.failed += 1
            return None
        self.stats.captioned += 1
        return text.strip()[: self._ingest.caption_max_chars]


def build_captioner(settings: Settings) -> VisionCaptioner | None:
    """A captioner for one document when a vision model is configured, else None (OCR only)."""
    model = settings.ingest.vision_model
    return VisionCaptioner(settings, model) if model else None
