"""Real model backends: the only modules that import faster_whisper, llama_cpp, piper and onnxruntime.

Thread wait policy, chosen on purpose (measured with ``voice bench contention``): llama.cpp and
CTranslate2 both run on libgomp. ``OMP_WAIT_POLICY=PASSIVE`` (sleep at once) made SmolLM2 decode ~1.7x
slower here (ITL 25-34 ms vs 15 ms), and ``ACTIVE`` spins idle threads without end, stealing the cores
from the next model. libgomp's default — spin about 300,000 iterations (well under a millisecond), then
sleep — is kept and pinned below; because the :class:`~voice.runtime.compute.ComputeGate` runs one compute step at
a time, that short spin tail is all the overlap there is. onnxruntime's spinning is switched off per
session (``voice.backends.onnx``). Set the variables yourself to override.

numpy's OpenBLAS is limited to one thread (``threadpoolctl``; ``OPENBLAS_NUM_THREADS=1`` for child
processes). Its worker thread busy-waits for a long while after each matrix product: after Whisper's (and
Smart Turn's) log-mel features, it took a core from llama.cpp for the whole prompt evaluation that follows,
which then ran twice as slow (12 prompt tokens: 80-90 ms instead of 45 ms; ``benchmarks/results/``
2026-12-03-techniques-blas). Those products are small: one thread computes them as fast.
"""

from __future__ import annotations

import os

os.environ.setdefault("GOMP_SPINCOUNT", "300000")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy  # noqa: F401  (loads OpenBLAS, so that the limit below reaches it)
from threadpoolctl import threadpool_limits

threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")
