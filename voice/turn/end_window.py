"""How much silence ends a turn, from the end-of-turn model's score and the words heard (pure).

:func:`window_ms` is the decision :class:`voice.turn.endpoint.Endpointer` applies each time it learns something
of a pause: the model's score (at ``[turn] score_after_ms`` of silence, and at each ``rescore_at_ms`` point) and,
with ``[turn] text_evidence``, the verdict of the speculative transcript (:mod:`voice.turn.text_evidence`). The
words veto, they do not grant: Whisper punctuates a cut question as a question ("What is the cap?"), but a cut
seldom ends on "the" or "...", and a finished turn almost never does (``voice bench pauses --variants
benchmarks/turn_variants.toml`` measures both). A language model's reading of the words (``[turn] words_model``,
:mod:`voice.turn.words_end`) both vetoes and grants: it reads the words without Whisper's punctuation.
"""

from __future__ import annotations

from voice.config.config import TurnConfig
from voice.turn.text_evidence import Verdict


def window_ms(turn: TurnConfig, score: float, text: Verdict | None = None, words_p: float | None = None) -> int:
    """The silence (ms, from the VAD's) after which a turn ends that the model scored ``score``, whose words say
    ``text`` (None: not heard yet, or ``[turn] text_evidence`` off) and end the turn with probability ``words_p``
    by ``[turn] words_model`` (None: no words model, or no words):

    * words that cannot end a sentence, or ``words_p`` under ``words_unfinished_below``: the incomplete
      window, whatever the score;
    * a score at or above ``sure_threshold`` (with ``sure_silence_ms``): the sure window, once the words had
      their say (with ``text_evidence``: they were heard and did not veto);
    * at or above ``complete_threshold``, or ``words_p`` at or above ``words_finished_at``: the complete window;
    * under it: the incomplete window, or ``text_finished_silence_ms`` when the words read finished; with
      ``graded_window``, a window that shortens as the score rises (:func:`graded_ms`)."""
    if text == "unfinished" or (words_p is not None and words_p < turn.words_unfinished_below):
        return turn.incomplete_silence_ms
    if turn.sure_silence_ms and score >= turn.sure_threshold and (text is not None or not turn.text_evidence):
        return turn.sure_silence_ms
    if score >= turn.complete_threshold or (words_p is not None and words_p >= turn.words_finished_at):
        return turn.complete_silence_ms
    if text == "finished" and turn.text_finished_silence_ms:
        return turn.text_finished_silence_ms
    if turn.graded_window:
        return graded_ms(turn, score)
    return turn.incomplete_silence_ms


def graded_ms(turn: TurnConfig, score: float) -> int:
    """``[turn] graded_window``: the window of a score under ``complete_threshold``, from the incomplete window
    at 0 down to the complete window at the threshold, in a straight line. A turn the model was nearly sure of
    (0.46) waits little more than a complete one; one it heard as plainly unfinished (0.05) nearly the long
    window."""
    share = min(max(score, 0.0), turn.complete_threshold) / turn.complete_threshold
    span = turn.incomplete_silence_ms - turn.complete_silence_ms
    return round(turn.incomplete_silence_ms - span * share)
