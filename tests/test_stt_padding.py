"""The short window's padding: the log-mel level of digital silence, as Whisper's feature extractor makes it."""

from __future__ import annotations

import numpy as np
import pytest

from voice.backends.stt_whisper import log_mel, silence_level


@pytest.mark.parametrize("amplitude", [0.01, 0.3, 0.9])
def test_silence_level_is_what_the_extractor_makes_of_zero_audio(amplitude: float) -> None:
    extract = log_mel
    rng = np.random.default_rng(0)
    t = np.arange(16_000) / 16_000
    speech = (amplitude * np.sin(2 * np.pi * 220 * t) + 0.01 * rng.standard_normal(16_000)).astype(np.float32)
    padded = extract(np.concatenate([speech, np.zeros(32_000, np.float32)]))
    # The frames well after the speech are pure silence; their level is predicted from the speech's features.
    assert np.allclose(padded[:, -100:], silence_level(extract(speech)), atol=1e-5)
    assert silence_level(extract(speech)) < -0.2  # far from the 0.0 faster-whisper pads with
