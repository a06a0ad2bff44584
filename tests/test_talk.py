import pytest

from voice.talk import NoAudioDeviceError, Player, _check_devices


class FakeSoundDevice:
    def __init__(self, devices: list[dict[str, int]]) -> None:
        self.devices = devices

    def query_devices(self) -> list[dict[str, int]]:
        return self.devices


def test_no_devices_is_a_clear_error() -> None:
    with pytest.raises(NoAudioDeviceError, match=r"no microphone and speaker found.*voice demo"):
        _check_devices(FakeSoundDevice([]))


def test_missing_microphone_is_named() -> None:
    with pytest.raises(NoAudioDeviceError, match="no microphone found"):
        _check_devices(FakeSoundDevice([{"max_input_channels": 0, "max_output_channels": 2}]))


def test_player_plays_then_clears_on_interrupt() -> None:
    import numpy as np

    p = Player()
    p.add(np.arange(1, 6, dtype=np.int16).tobytes())
    out = np.zeros((3, 1), np.int16)
    p.callback(out, 3, None, None)
    assert out[:, 0].tolist() == [1, 2, 3]
    p.clear()
    p.callback(out, 3, None, None)
    assert out[:, 0].tolist() == [0, 0, 0]
