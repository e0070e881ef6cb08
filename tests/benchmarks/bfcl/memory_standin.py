"""Embedding models for BFCL memory's vector backend that the tests build themselves (nothing is
downloaded): a deterministic stand-in encoder (hashed words, no weights), and a tiny
sentence-transformers model folder (one random BERT layer over a character vocabulary) that the real
loading code reads."""

from __future__ import annotations

import hashlib
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np


class StandInEncoder:
    """What bfcl-eval's vector store asks of its encoder: ``encode(texts, normalize_embeddings=True)``
    (an array of one row per text) and ``get_sentence_embedding_dimension()``. A text's vector is the
    signed count of its hashed words, L2-normalised: equal texts embed equally, shared words score."""

    dimension = 32

    def get_sentence_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts: str | list[str], normalize_embeddings: bool = False, **_: Any) -> np.ndarray:
        rows = texts if isinstance(texts, list) else [texts]
        out = np.zeros((len(rows), self.dimension), dtype=np.float32)
        for index, text in enumerate(rows):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.sha256(word.encode()).digest()
                out[index, digest[0] % self.dimension] += 1.0 if digest[1] % 2 else -1.0
            norm = float(np.linalg.norm(out[index]))
            if normalize_embeddings and norm:
                out[index] /= norm
        return out


def build_tiny_model(folder: Path) -> Path:
    """A sentence-transformers model folder with a 16-dimensional one-layer BERT (random weights, seeded)
    and a one-character-per-token vocabulary; returns its path."""
    import tokenizers
    import torch
    import transformers

    with warnings.catch_warnings():  # the module path moved in sentence-transformers 5
        warnings.simplefilter("ignore", DeprecationWarning)
        from sentence_transformers import SentenceTransformer, models

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *map(chr, range(97, 123)), *"0123456789"]
    vocab = {word: index for index, word in enumerate(words)}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Split("", "isolated")
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    raw = folder / "bert"
    fast.save_pretrained(raw)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=2048,
    )
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(raw)
    word = models.Transformer(str(raw), max_seq_length=2048)
    size = (getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension)()
    model = SentenceTransformer(modules=[word, models.Pooling(size, pooling_mode="mean")], device="cpu")
    out = folder / "tiny-sentence-model"
    model.save(str(out))
    return out
