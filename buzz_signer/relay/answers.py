"""The relay's answers to a join (28934), a leave (28936) and a member's invite request (28935
REQ), by word: SPEC section 7's NIP-01 messages, in answers.json.

The page reads the same file (web/src/answers.js) and knows an answer by its word, then says
it in a sentence of its own (web/README.md, "What the page relies on"): a message reworded
here is reworded for both, and none is matched back from prose.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["ANSWERS", "answer"]

ANSWERS: dict[str, str] = json.loads(
    Path(__file__).with_name("answers.json").read_text(encoding="utf-8")
)


def answer(word: str, **values: object) -> str:
    """The message for `word`, its {placeholders} filled from `values`."""
    return ANSWERS[word].format(**values)
