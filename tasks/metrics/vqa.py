"""VQA accuracy: Antol et al., "VQA: Visual Question Answering", ICCV 2015, Section 4, computed
as the official evaluation script does (GT-Vision-Lab/VQA,
``PythonEvaluationTools/vqaEvaluation/vqaEval.py``: ``processPunctuation``,
``processDigitArticle`` and the accuracy loop of ``evaluate``), in one of two versions of it.

The paper's measure is ``Acc(ans) = min(#humans that said ans / 3, 1)``; the official script
averages it over every subset of the human answers that leaves one out (the 10-choose-9
subsets of VQA's ten answers): for each human answer in turn, count the *other* humans whose
answer equals the model's, take ``min(count / 3, 1)``, and average the results.

Processing, as the script does it:

1. newlines and tabs become spaces, surrounding space is stripped;
2. ``processPunctuation``: each of ``; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !`` is deleted
   when the text has it next to a space or holds a digit-comma-digit group (``10,000``), else
   replaced by a space; then periods not followed by a digit are deleted (the script's regular
   expression ``(?!<=\\d)(\\.)(?!\\d)`` and its ``sub(..., re.UNICODE)``, whose flag lands in the
   ``count`` argument and so deletes at most 32 of them, are kept as they are);
3. ``processDigitArticle``: lowercased, split on white space, number words ``none``, ``zero``
   ... ``ten`` become digits, the articles ``a an the`` are dropped, missing apostrophes of
   contractions are restored (``dont`` → ``don't``), words joined by one space.

**Versions** (``VERSIONS``; a task picks one with ``config["vqa_version"]``, and the version is
in the metric's signature on every evaluation run, ``vqa_signature``):

- ``"2021"`` (the default): the script as it stands today (commit a013f00 of 11 March 2021).
  Every answer gets step 1. Steps 2 and 3 run, on the human answers and on the model's, only
  when the human answers are not all the same text; when they all agree, nothing is normalised,
  so "Yes" against ten "yes" scores 0 (a quirk of the script, kept).
- ``"2016"``: the script of 8 October 2016 (commit 458a8b2), step for step. The model's answer
  always gets steps 1 to 3. The human answers are taken as given (no step 1, no lowercasing),
  and only when they are not all the same text each gets step 2 (``processPunctuation``) and
  nothing more: that script assumed VQA had normalised them when it collected them. So ten
  humans who wrote "the two" do not match a model that says "the two" (its answer becomes "2"):
  0, where version 2021 gives 1.

With a single human answer (an annotator alone, which VQA's script never sees: it has ten) the
leave-one-out average is always 0, so in both versions both answers are normalised and the
paper's formula is applied directly (1/3 when they match, else 0): an annotator who writes "Two"
is not fooled by a model that says "2". This rule is the platform's, not the script's.
"""

from __future__ import annotations

import re

NUMBER_WORDS = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}
ARTICLES = ("a", "an", "the")
PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!")
_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")
_DIGIT_COMMA_DIGIT = re.compile(r"(\d)(,)(\d)")

# The official script's table of contractions written without their apostrophes.
CONTRACTIONS = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've", "couldnt": "couldn't",
    "couldn'tve": "couldn't've", "couldnt've": "couldn't've", "didnt": "didn't", "doesnt": "doesn't", "dont": "don't",
    "hadnt": "hadn't", "hadnt've": "hadn't've", "hadn'tve": "hadn't've", "hasnt": "hasn't", "havent": "haven't",
    "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've", "hes": "he's", "howd": "how'd", "howll": "how'll",
    "hows": "how's", "Id've": "I'd've", "I'dve": "I'd've", "Im": "I'm", "Ive": "I've", "isnt": "isn't", "itd": "it'd",
    "itd've": "it'd've", "it'dve": "it'd've", "itll": "it'll", "let's": "let's", "maam": "ma'am", "mightnt": "mightn't",
    "mightnt've": "mightn't've", "mightn'tve": "mightn't've", "mightve": "might've", "mustnt": "mustn't",
    "mustve": "must've", "neednt": "needn't", "notve": "not've", "oclock": "o'clock", "oughtnt": "oughtn't",
    "ow's'at": "'ow's'at", "'ows'at": "'ow's'at", "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've",
    "she'dve": "she'd've", "she's": "she's", "shouldve": "should've", "shouldnt": "shouldn't",
    "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd",
    "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've", "somebodyll": "somebody'll",
    "somebodys": "somebody's", "someoned": "someone'd", "someoned've": "someone'd've", "someone'dve": "someone'd've",
    "someonell": "someone'll", "someones": "someone's", "somethingd": "something'd", "somethingd've": "something'd've",
    "something'dve": "something'd've", "somethingll": "something'll", "thats": "that's", "thered": "there'd",
    "thered've": "there'd've", "there'dve": "there'd've", "therere": "there're", "theres": "there's",
    "theyd": "they'd", "theyd've": "they'd've", "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're",
    "theyve": "they've", "twas": "'twas", "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've",
    "weve": "we've", "werent": "weren't", "whatll": "what'll", "whatre": "what're", "whats": "what's",
    "whatve": "what've", "whens": "when's", "whered": "where'd", "wheres": "where's", "whereve": "where've",
    "whod": "who'd", "whod've": "who'd've", "who'dve": "who'd've", "wholl": "who'll", "whos": "who's",
    "whove": "who've", "whyll": "why'll", "whyre": "why're", "whys": "why's", "wont": "won't", "wouldve": "would've",
    "wouldnt": "wouldn't", "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've", "yall": "y'all",
    "yall'll": "y'all'll", "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've",
    "y'all'dve": "y'all'd've", "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've", "youll": "you'll",
    "youre": "you're", "youve": "you've",
}


def process_punctuation(text: str) -> str:
    """The official script's ``processPunctuation`` (see the module docstring, step 2)."""
    out = text
    joined_number = _DIGIT_COMMA_DIGIT.search(text) is not None
    for mark in PUNCTUATION:
        if (mark + " " in text or " " + mark in text) or joined_number:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _PERIOD.sub("", out, count=re.UNICODE)


def process_digit_article(text: str) -> str:
    """The official script's ``processDigitArticle`` (step 3)."""
    words = [NUMBER_WORDS.get(word, word) for word in text.lower().split()]
    words = [CONTRACTIONS.get(word, word) for word in words if word not in ARTICLES]
    return " ".join(words)


def normalise_answer(text) -> str:
    """Return ``text`` (any value; None is "") as the official script compares answers: white space
    (step 1), ``process_punctuation``, then ``process_digit_article``."""
    text = str(text or "").replace("\n", " ").replace("\t", " ").strip()
    return process_digit_article(process_punctuation(text))


VERSIONS = {
    "2021": "GT-Vision-Lab/VQA vqaEval.py a013f00 (2021-03-11)",
    "2016": "GT-Vision-Lab/VQA vqaEval.py 458a8b2 (2016-10-08)",
}
"""Versions of the official script this module computes, with the commit each follows."""
DEFAULT_VERSION = "2021"


def vqa_version(config: dict) -> str:
    """The task's version of the official script (``config["vqa_version"]``, default ``"2021"``);
    raises ``ValueError`` for a version this module does not compute."""
    version = str(config.get("vqa_version", DEFAULT_VERSION))
    if version not in VERSIONS:
        raise ValueError(f"vqa_version is one of {', '.join(VERSIONS)}, not {version!r}")
    return version


def vqa_signature(version: str) -> str:
    """The metric's signature string, stored on each evaluation run: ``vqa_accuracy|official:<version>|<commit>``."""
    return f"vqa_accuracy|official:{version}|{VERSIONS[version]}"


def _white_space(text) -> str:
    return str(text or "").replace("\n", " ").replace("\t", " ").strip()


def vqa_accuracy(answer, human_answers: list, *, version: str = DEFAULT_VERSION) -> float:
    """Return the VQA accuracy in [0, 1] of ``answer`` against ``human_answers`` (texts, one per person).

    ``min(#humans who gave that answer / 3, 1)`` (Antol et al., ICCV 2015, Section 4), averaged over
    the leave-one-out subsets of the human answers as the official script does (for VQA's ten answers:
    the 10-choose-9 subsets), with the answer processing of ``version`` of the script (``VERSIONS``,
    module docstring). One human answer: both normalised, the formula directly (1/3 or 0). No human
    answer: 0. Raises ``ValueError`` for an unknown version.

    Examples: ten answers of which three are "2", the model says "two": (3 · 2/3 + 7 · 1) / 10 = 0.9;
    one of ten matches: 0.3; two: 0.6; four or more: 1.0. Ten "yes" and the model says "Yes": 0 in
    version 2021 (nothing is normalised when the humans agree), 1 in version 2016 (the model's answer
    always is); ten "the two" and the model says "the two": 1 in version 2021, 0 in version 2016.
    """
    if version not in VERSIONS:
        raise ValueError(f"vqa_version is one of {', '.join(VERSIONS)}, not {version!r}")
    if not human_answers:
        return 0.0
    if len(human_answers) == 1:  # the platform's rule for a lone annotator (module docstring)
        return min(1.0, float(normalise_answer(human_answers[0]) == normalise_answer(answer)) / 3)
    if version == "2016":  # the model's answer always normalised; the humans' only stripped of punctuation, when they differ
        given = normalise_answer(answer)
        humans = [str(h or "") for h in human_answers]
        if len(set(humans)) > 1:
            humans = [process_punctuation(h) for h in humans]
    else:  # 2021: white space for all; everything normalised only when the humans differ
        given = _white_space(answer)
        humans = [_white_space(h) for h in human_answers]
        if len(set(humans)) > 1:
            given = normalise_answer(given)
            humans = [normalise_answer(h) for h in humans]
    matches = sum(h == given for h in humans)
    total = 0.0
    for left_out in humans:
        total += min(1.0, (matches - (left_out == given)) / 3)
    return total / len(humans)
