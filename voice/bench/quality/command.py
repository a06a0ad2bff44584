"""``voice bench quality``: with ``--rejudge`` a stored result is judged again (:mod:`voice.bench.quality.rejudge`),
with ``--fit-not-sure`` stored results say what each ``[llm] not_sure`` threshold would do
(:mod:`voice.bench.quality.not_sure`), with ``--fit-ask-again`` what each ``[stt] ask_again_llm_below_logprob``
would and with ``--fit-ask-again-words`` each ``ask_again_llm_below_word_prob``
(:mod:`voice.bench.quality.ask_again_fit`), else the question set is asked (:mod:`voice.bench.quality.measure`)."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    if getattr(args, "fit_not_sure", None):
        from voice.bench.quality import not_sure

        return not_sure.run(args)
    if getattr(args, "fit_ask_again", None) or getattr(args, "fit_ask_again_words", None):
        from voice.bench.quality import ask_again_fit

        return ask_again_fit.run(args)
    if getattr(args, "rejudge", None) is not None:
        from voice.bench.quality import rejudge as quality_rejudge

        return quality_rejudge.run(args)
    from voice.bench.quality import measure as quality

    return quality.run(args)
