import sys

import numpy as np
import pytest

from callbench.benchmarks.complexfuncbench.embedders import CharNgramEmbedder, make_embedder
from callbench.errors import UserError


def test_char_ngram_similarity_prefers_the_closer_call():
    emb = CharNgramEmbedder()
    left = ['{"name": "Search_Hotels", "arguments": {"dest_id": "-1"}}']
    right = [
        '{"name": "Get_Filter", "arguments": {"dest_id": "-1"}}',
        '{"name": "Search_Hotels", "arguments": {"dest_id": "-2"}}',
    ]
    sims = emb.similarity(left, right)
    assert sims.shape == (1, 2)
    assert sims[0, 1] > sims[0, 0]
    assert np.isclose(emb.similarity(left, left)[0, 0], 1.0)
    assert emb.similarity(["abc"], ["xyz"])[0, 0] == 0.0


def test_make_embedder_specs():
    assert make_embedder("char-ngram").name == "char-ngram-3"
    assert make_embedder("char-ngram-4").name == "char-ngram-4"
    with pytest.raises(UserError, match="unknown embedder"):
        make_embedder("bge")


def test_sentence_transformers_needs_its_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if not installed
    with pytest.raises(UserError, match=r"callbench\[embeddings\]"):
        make_embedder("st:models/bge-large-en-v1.5")


def test_sentence_transformers_embedder_with_a_stand_in_model(monkeypatch):
    import types

    class FakeModel:
        def __init__(self, path, device):
            self.path, self.device = path, device

        def encode(self, texts, normalize_embeddings):
            assert normalize_embeddings
            vecs = np.array([[1.0, 0.0] if "hotel" in t else [0.0, 1.0] for t in texts])
            return vecs

    monkeypatch.setitem(
        sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeModel)
    )
    emb = make_embedder("st:models/bge-large-en-v1.5/")
    assert emb.name == "sentence-transformers:bge-large-en-v1.5"
    sims = emb.similarity(["hotel a", "flight b"], ["flight c", "hotel d"])
    assert sims.tolist() == [[0.0, 1.0], [1.0, 0.0]]
