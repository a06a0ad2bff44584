"""Real model backends: the only modules that import faster_whisper, llama_cpp, piper and onnxruntime.

Importing this package sets the OpenMP wait policy before any of those libraries loads: idle OpenMP
threads sleep instead of spinning, so a model that just finished a step does not keep burning the cores
the next model needs (see ``voice.compute``). Set the variables yourself to override.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # libgomp (llama.cpp) and Intel OpenMP (CTranslate2)
os.environ.setdefault("KMP_BLOCKTIME", "0")  # Intel OpenMP: sleep right after a parallel region
