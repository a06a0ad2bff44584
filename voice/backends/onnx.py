"""onnxruntime session options shared by the VAD and TTS backends."""

from __future__ import annotations

from typing import Any


def session_options(threads: int) -> Any:
    """Options with ``threads`` intra-op threads that sleep instead of spinning when idle."""
    import onnxruntime

    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    # Idle onnxruntime workers spin by default, stealing the cores the next model needs.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return opts
