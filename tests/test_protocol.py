import json

import pytest

from voice.wire import protocol as p


def test_start_round_trip() -> None:
    msg = p.decode_client_text(
        json.dumps({"type": "start", "sample_rate": 48000, "output_sample_rate": 16000})
    )
    assert msg == p.Start(sample_rate=48000, output_sample_rate=16000)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{not json", p.BAD_JSON),
        ("[1, 2]", p.BAD_JSON),
        ('{"kind": "start"}', p.BAD_MESSAGE),
        ('{"type": "dance"}', p.UNKNOWN_TYPE),
        ('{"type": "start"}', p.BAD_MESSAGE),
        ('{"type": "start", "sample_rate": "16000"}', p.BAD_MESSAGE),
        ('{"type": "start", "sample_rate": true}', p.BAD_MESSAGE),
        ('{"type": "start", "sample_rate": 1000000000}', p.BAD_SAMPLE_RATE),
        ('{"type": "start", "sample_rate": 0}', p.BAD_SAMPLE_RATE),
        ('{"type": "start", "sample_rate": 16000, "output_sample_rate": 5}', p.BAD_SAMPLE_RATE),
        ('{"type": "start", "sample_rate": 16000, "channels": 2}', p.BAD_MESSAGE),
        ('{"type": "start", "sample_rate": 16000, "format": "f32le"}', p.BAD_MESSAGE),
        ('{"type": "start", "sample_rate": 16000, "extra": 1}', p.BAD_MESSAGE),
        ('{"type": "start", "sample_rate": 16000, "token": 5}', p.BAD_MESSAGE),
        ("[" * 100000 + "]" * 100000, p.BAD_JSON),
    ],
)
def test_bad_messages(text: str, code: str) -> None:
    err = p.decode_client_text(text)
    assert isinstance(err, p.ProtocolError)
    assert err.code == code
    assert err.message


def test_simple_messages() -> None:
    assert p.decode_client_text('{"type": "end_turn"}') == p.EndTurn()
    assert p.decode_client_text('{"type": "reset"}') == p.Reset()
    assert p.decode_client_text('{"type": "stop"}') == p.Stop()


def test_audio_frames() -> None:
    err = p.check_audio_frame(b"\x00\x00", started=False)
    assert err is not None and err.code == p.NOT_STARTED
    err = p.check_audio_frame(b"\x00\x00\x00", started=True)
    assert err is not None and err.code == p.ODD_LENGTH and "3 bytes" in err.message
    assert p.check_audio_frame(b"\x00\x00", started=True) is None
