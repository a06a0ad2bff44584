#!/usr/bin/env bash
# Reproduce the committed reference results in benchmarks/results/ (about an hour on 2 cores).
# Needs the models: voice models pull tiny.en base smollm2-135m qwen2.5-coder-0.5b gemma3-270m joe-medium smart-turn-v3.2
# Speech: $VOICE_SPEECH_DIR, else ../shared/speech next to the repository (a folder of WAV/FLAC + transcripts.tsv).
# Every run first waits (up to WAIT_MAX s) for a quiet machine — other processes under 10% of the CPU and the
# 1-minute load average at most MAX_LOAD: other work inflates latency. Each result records how busy it was.
set -euo pipefail
cd "$(dirname "$0")/.."
VOICE=${VOICE:-.venv/bin/voice}
SPEECH=${VOICE_SPEECH_DIR:-../shared/speech}
OUT=benchmarks/results/$(date +%F)
LOAD=${MAX_LOAD:-1.0}
WAIT=${WAIT_MAX:-1800}

# Mouth-to-ear of the default models over every clip, 3 repeats after 1 warm-up turn.
$VOICE bench e2e --speech "$SPEECH" --repeats 3 --warmup 1 --max-load "$LOAD" --wait-max "$WAIT" --out "$OUT-e2e"

# What each latency technique buys: serial → speculative turn → short STT window → first chunk → lead trim
# → Smart Turn (the defaults), 2 repeats after 1 warm-up turn per step, in one sitting.
$VOICE bench techniques --speech "$SPEECH" --repeats 2 --warmup 1 --max-load "$LOAD" \
    --wait-max "$WAIT" --out "$OUT-techniques"

# Whisper on the real audio length vs the 30 s window, on the clips and 16 espeak-ng questions.
$VOICE bench stt --speech "$SPEECH" --espeak --repeats 3 --max-load "$LOAD" --wait-max "$WAIT" --out "$OUT-stt"

# False endpoints on spliced mid-sentence pauses and end-of-turn delay, per endpointing strategy (offline).
$VOICE bench pauses --speech "$SPEECH" --out "$OUT-pauses"

# TTFT vs prompt length, prefix cached and not, for the default LLM and the bigger one.
$VOICE bench prefill --llm smollm2-135m,qwen2.5-coder-0.5b --lengths 128,512,1024,2000 --repeats 3 \
    --max-load "$LOAD" --wait-max "$WAIT" --out "$OUT-prefill"

# Prompt-lookup speculative decoding with 2 and 10 draft tokens.
$VOICE bench speculative --llm smollm2-135m,qwen2.5-coder-0.5b --draft-tokens 2,10 --repeats 3 \
    --max-load "$LOAD" --wait-max "$WAIT" --out "$OUT-speculative"

# STT and LLM alone / together without the gate / through the gate, under three thread wait policies.
$VOICE bench contention --speech "$SPEECH" --repeats 5 --wait-policies project,PASSIVE,ACTIVE \
    --max-load "$LOAD" --wait-max "$WAIT" --out "$OUT-contention"

# Every catalogue combination (2 STT x 3 LLM x 1 TTS), 2 repeats after 1 warm-up turn, one process each.
$VOICE bench matrix --speech "$SPEECH" --repeats 2 --warmup 1 --max-load "$LOAD" --wait-max "$WAIT" \
    --keep "${TMPDIR:-/tmp}/voice-matrix-runs" --out "$OUT-matrix"
