"""Speech recognition metrics: word and character error rates (WER, CER) after one normalisation.

Edit operations come from ``jiwer`` (``process_words`` and ``process_characters``: a Levenshtein
alignment, Morris et al., "From WER and RIL to MER and WIL", Interspeech 2004, for the measures'
definitions). This module adds what jiwer leaves to its caller:

- ``normalise_transcript``: the one normalisation applied to references and hypotheses alike
  before any count (case, punctuation, numbers; see its docstring), so "Turn on 2 lights." and
  "turn on two lights" are the same transcript;
- several references per utterance: the utterance counts against the reference that gives
  the fewest errors (ties: the first listed), as ``sclite`` scores alternates;
- corpus rates: the sum of errors over the sum of the chosen references' lengths (not a mean
  of per-utterance rates), as ``jiwer.wer(list, list)`` and NIST's ``sclite`` report them.

Rates are fractions (0.25, not 25 %) and can exceed 1 when a hypothesis inserts more words than
its reference holds. An empty reference (after normalisation) counts every hypothesis word as an
insertion; its per-utterance rate is 0 when the hypothesis is empty too and 1 otherwise.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
        "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = [(10**9, "billion"), (10**6, "million"), (1000, "thousand")]
_ORDINAL_WORDS = {
    "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
    "twelve": "twelfth",
}
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(st|nd|rd|th)?(%?)(?!\w)")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_SPACE_MARKS = re.compile(r"[-\u2010-\u2015/_]")
_MAX_SPOKEN = 10**12


def _below_thousand(n: int) -> list[str]:
    words = []
    if n >= 100:
        words += [_ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10])
        n %= 10
        if n:
            words.append(_ONES[n])
    elif n or not words:
        words.append(_ONES[n])
    return words


def number_words(n: int) -> list[str]:
    """Return a whole number 0 ≤ n < 10¹² in English words, without "and" (``1203`` → ``one thousand
    two hundred three``); larger numbers are read digit by digit."""
    if n >= _MAX_SPOKEN:
        return [_ONES[int(d)] for d in str(n)]
    words = []
    for scale, name in _SCALES:
        if n >= scale:
            words += _below_thousand(n // scale) + [name]
            n %= scale
    if n or not words:
        words += _below_thousand(n)
    return words


def _ordinal(words: list[str]) -> list[str]:
    last = words[-1]
    if last in _ORDINAL_WORDS:
        return words[:-1] + [_ORDINAL_WORDS[last]]
    if last.endswith("y"):
        return words[:-1] + [last[:-1] + "ieth"]
    return words[:-1] + [last + "th"]


def _spell_number(match: re.Match) -> str:
    whole, decimals, ordinal, percent = match.groups()
    words = number_words(int(whole.replace(",", "")))
    if decimals:
        words += ["point"] + [_ONES[int(d)] for d in decimals]
    elif ordinal:
        words = _ordinal(words)
    if percent:
        words.append("percent")
    return f" {' '.join(words)} "


def normalise_transcript(text: str) -> str:
    """Return ``text`` normalised for WER and CER, the same for references and hypotheses.

    In order: Unicode NFKC; lower case (``casefold``); numbers written as English words
    (``12`` → ``twelve``, ``1,500`` → ``one thousand five hundred``, ``2.5`` → ``two point five``,
    ``3rd`` → ``third``, ``50%`` → ``fifty percent``; 10¹² and above digit by digit); hyphens,
    dashes, slashes and underscores become spaces; every other punctuation mark or symbol
    (Unicode categories P and S) is dropped, except an apostrophe inside a word (``don't``,
    with curly apostrophes made straight); white space collapsed to single spaces, none at
    either end.
    """
    text = unicodedata.normalize("NFKC", str(text or "")).casefold().translate(_APOSTROPHES)
    text = _NUMBER.sub(_spell_number, text)
    text = _SPACE_MARKS.sub(" ", text)
    kept = []
    for n, ch in enumerate(text):
        if ch == "'":
            inside = 0 < n < len(text) - 1 and text[n - 1].isalnum() and text[n + 1].isalnum()
            kept.append(ch if inside else " ")
        elif unicodedata.category(ch)[0] in "PS":
            kept.append(" ")
        else:
            kept.append(ch)
    return " ".join("".join(kept).split())


@dataclass(frozen=True)
class Errors:
    """Edit counts of one utterance against its chosen reference: ``errors`` (substitutions +
    deletions + insertions) and ``length`` (words or characters of that reference)."""

    errors: int
    length: int

    @property
    def rate(self) -> float:
        """``errors / length``; for an empty reference 0.0 when there is no error, else 1.0."""
        if self.length == 0:
            return float(self.errors > 0)
        return self.errors / self.length


def _jiwer():
    import jiwer  # imported lazily: only scoring needs it

    return jiwer


def _count(reference: str, hypothesis: str, *, unit: str) -> Errors:
    """Edit counts of already-normalised strings; ``unit`` is ``word`` or ``char``."""
    if unit == "word":
        ref_len, hyp_len = len(reference.split()), len(hypothesis.split())
    else:
        ref_len, hyp_len = len(reference), len(hypothesis)
    if ref_len == 0:
        return Errors(errors=hyp_len, length=0)
    if hyp_len == 0:
        return Errors(errors=ref_len, length=ref_len)
    jiwer = _jiwer()
    out = (jiwer.process_words if unit == "word" else jiwer.process_characters)(reference, hypothesis)
    return Errors(errors=out.substitutions + out.deletions + out.insertions, length=ref_len)


def best_errors(hypothesis: str, references: list[str], *, unit: str = "word") -> Errors:
    """Return the edit counts of ``hypothesis`` against the reference of ``references`` (at least
    one, raw text) with the fewest errors, ties to the first; both sides are normalised first
    (``normalise_transcript``). ``unit``: ``word`` (WER) or ``char`` (CER, spaces count as
    characters, as ``jiwer.cer``). Raises ``ValueError`` for no reference or an unknown unit."""
    if unit not in ("word", "char"):
        raise ValueError(f"unit must be 'word' or 'char', not {unit!r}")
    if not references:
        raise ValueError("an utterance needs at least one reference transcript")
    hyp = normalise_transcript(hypothesis)
    best = None
    for reference in references:
        counted = _count(normalise_transcript(reference), hyp, unit=unit)
        if best is None or counted.errors < best.errors:
            best = counted
    return best


def utterance_wer(hypothesis: str, references: list[str]) -> float:
    """WER of one hypothesis against its best reference (``best_errors``), a fraction ≥ 0."""
    return best_errors(hypothesis, references, unit="word").rate


def utterance_cer(hypothesis: str, references: list[str]) -> float:
    """CER of one hypothesis against its best reference (``best_errors``), a fraction ≥ 0."""
    return best_errors(hypothesis, references, unit="char").rate


def corpus_rate(counts: list[Errors]) -> float:
    """Σ errors / Σ reference lengths over utterances; 0.0 for no utterance, and 1.0 when every
    reference is empty but some hypothesis is not."""
    errors = sum(c.errors for c in counts)
    length = sum(c.length for c in counts)
    if length == 0:
        return float(errors > 0)
    return errors / length


def corpus_scores(hypotheses: list[str], references: list[list[str]]) -> dict:
    """Return ``{"wer", "cer"}`` (fractions) of ``hypotheses`` against ``references[i]`` (the
    reference transcripts of utterance ``i``), each utterance scored against its best reference
    separately for words and for characters."""
    words = [best_errors(h, r, unit="word") for h, r in zip(hypotheses, references, strict=True)]
    chars = [best_errors(h, r, unit="char") for h, r in zip(hypotheses, references, strict=True)]
    return {"wer": corpus_rate(words), "cer": corpus_rate(chars)}
