"""Text embedders for ComplexEval's call mapping (similarity + Hungarian assignment).

The default needs no weights: character n-gram count vectors compared by cosine, which order
calls by shared names and argument text well enough to pair them. ``sentence-transformers``
(for example ``bge-large-en-v1.5`` from a local folder) is an optional extra.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Protocol

import numpy as np

from callbench.plugin import UserError, missing_extra


class Embedder(Protocol):
    """Anything that gives a similarity matrix between two lists of texts."""

    name: str
    """Recorded in every ComplexEval record so runs with different embedders are never pooled."""

    def similarity(self, left: list[str], right: list[str]) -> np.ndarray:
        """Matrix ``[len(left), len(right)]`` of similarities (higher = more alike)."""
        ...


class CharNgramEmbedder:
    """Cosine similarity of character n-gram counts (deterministic, weight-free, fast)."""

    def __init__(self, n: int = 3) -> None:
        if n < 1:
            raise UserError(f"char n-gram embedder: n must be >= 1, got {n}")
        self.n = n
        self.name = f"char-ngram-{n}"

    def similarity(self, left: list[str], right: list[str]) -> np.ndarray:
        lv = [_grams(t, self.n) for t in left]
        rv = [_grams(t, self.n) for t in right]
        out = np.zeros((len(lv), len(rv)))
        for i, (a, na) in enumerate(lv):
            for j, (b, nb) in enumerate(rv):
                small, big = (a, b) if len(a) <= len(b) else (b, a)
                dot = sum(c * big[g] for g, c in small.items() if g in big)
                out[i, j] = dot / (na * nb)
        return out


@lru_cache(maxsize=8192)
def _grams(text: str, n: int) -> tuple[Counter[str], float]:
    # Cached: gold calls recur across every trace of a sample.
    padded = f" {text} "
    grams = Counter(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))
    return grams, math.sqrt(sum(c * c for c in grams.values())) or 1.0


class SentenceTransformerEmbedder:
    """Dense embeddings from a local ``sentence-transformers`` model folder (optional extra)."""

    def __init__(self, model_path: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise missing_extra(
                "the sentence-transformers embedder", "sentence_transformers", "embeddings"
            ) from None
        self._model = SentenceTransformer(model_path, device="cpu")
        self.name = f"sentence-transformers:{model_path.rstrip('/').rsplit('/', 1)[-1]}"

    def similarity(self, left: list[str], right: list[str]) -> np.ndarray:
        a = self._model.encode(left, normalize_embeddings=True)
        b = self._model.encode(right, normalize_embeddings=True)
        return np.asarray(a) @ np.asarray(b).T


def make_embedder(spec: str) -> Embedder:
    """Build an embedder from a spec: ``char-ngram`` / ``char-ngram-N`` or ``st:<local model path>``."""
    if spec == "char-ngram":
        return CharNgramEmbedder()
    if spec.startswith("char-ngram-") and spec.removeprefix("char-ngram-").isdigit():
        return CharNgramEmbedder(int(spec.removeprefix("char-ngram-")))
    if spec.startswith("st:") and len(spec) > 3:
        return SentenceTransformerEmbedder(spec[3:])
    raise UserError(f"unknown embedder {spec!r}: use 'char-ngram', 'char-ngram-N' or 'st:<local model path>'")
