"""Small deterministic text perturbations for the robustness and fairness scores.

Dynaboard (Ma et al., NeurIPS 2021, section 3.2 and appendix B) measures robustness and
fairness as *consistency*: the performance metric of a model's predictions on perturbed
inputs, taking its own predictions on the original inputs as the reference. Robustness
uses meaning-preserving noise (typos, case, punctuation, contractions), fairness swaps
gendered words and first names. No installable library offers all of these offline:
``textattack`` requires its own torch, flair and Java tools, and ``nlpaug`` has no
gender/name swaps or contractions and downloads data for its word-level augmenters. So
these are our own, and they are deterministic (keyed by ``zlib.crc32``, never Python's
salted ``hash``), so a rerun of an evaluation gives the same scores.

Each item gets at most one robustness variant (the transform is chosen by rotating over
``ROBUSTNESS`` from a per-item starting point, falling back to the next one that changes
the text) and at most one fairness variant (every gender and name swap at once): two
extra model passes at most.
"""

from __future__ import annotations

import re
import zlib

ROBUSTNESS = ("typo", "case", "punctuation", "contraction")
FAIRNESS = ("gender", "name")

_WORD = re.compile(r"[A-Za-z]+")


def _key_int(key: str) -> int:
    return zlib.crc32(key.encode("utf-8"))


def _match_case(word: str, replacement: str) -> str:
    if word.isupper() and len(word) > 1:
        return replacement.upper()
    if word[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def typo(text: str, *, key: str = "") -> str | None:
    """Swap two adjacent inner letters of one word of 4+ letters (chosen from ``key``)."""
    words = [m for m in _WORD.finditer(text) if len(m.group()) >= 4 and len(set(m.group()[1:-1].lower())) > 1]
    if not words:
        return None
    n = _key_int(key + text)
    word = words[n % len(words)]
    w = word.group()
    for offset in range(len(w) - 3):
        i = 1 + (n + offset) % (len(w) - 3)  # inner positions 1 .. len-3, keeps first and last letters
        if w[i] != w[i + 1]:
            swapped = w[:i] + w[i + 1] + w[i] + w[i + 2:]
            return text[: word.start()] + swapped + text[word.end():]
    return None


def case(text: str, *, key: str = "") -> str | None:
    """Lower-case the text; an all-lower-case text gets its first letter capitalised instead."""
    lowered = text.lower()
    if lowered != text:
        return lowered
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1:]
    return None


_PUNCT = re.compile(r"[.,;:!?]+")


def punctuation(text: str, *, key: str = "") -> str | None:
    """Drop sentence punctuation (``.,;:!?``); a text without any gets a final full stop."""
    stripped = " ".join(_PUNCT.sub("", text).split())
    if stripped != " ".join(text.split()):
        return stripped or None
    return text.rstrip() + "." if text.strip() else None


_CONTRACTIONS = {
    "do not": "don't", "does not": "doesn't", "did not": "didn't", "is not": "isn't", "are not": "aren't",
    "was not": "wasn't", "were not": "weren't", "have not": "haven't", "has not": "hasn't", "had not": "hadn't",
    "will not": "won't", "would not": "wouldn't", "could not": "couldn't", "should not": "shouldn't",
    "cannot": "can't", "must not": "mustn't", "i am": "i'm", "i have": "i've", "i will": "i'll", "i would": "i'd",
    "you are": "you're", "we are": "we're", "they are": "they're", "it is": "it's", "that is": "that's",
    "there is": "there's", "what is": "what's", "let us": "let's", "he is": "he's", "she is": "she's",
}
_EXPANSIONS = {short: long for long, short in _CONTRACTIONS.items()}


def _phrase_pattern(phrases) -> re.Pattern:
    alternatives = sorted(phrases, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in alternatives) + r")\b", re.IGNORECASE)


_CONTRACTED = _phrase_pattern(_EXPANSIONS)
_EXPANDED = _phrase_pattern(_CONTRACTIONS)


def contraction(text: str, *, key: str = "") -> str | None:
    """Expand contractions (``don't`` → ``do not``); a text without any gets its expansions contracted."""
    normalised = text.replace("\u2019", "'")
    if _CONTRACTED.search(normalised):
        out = _CONTRACTED.sub(lambda m: _match_case(m.group(), _EXPANSIONS[m.group().lower()]), normalised)
    else:
        out = _EXPANDED.sub(lambda m: _match_case(m.group(), _CONTRACTIONS[" ".join(m.group().lower().split())]), normalised)
    return out if out != normalised else None


_GENDER_PAIRS = [
    ("he", "she"), ("him", "her"), ("his", "her"), ("himself", "herself"), ("man", "woman"), ("men", "women"),
    ("boy", "girl"), ("boys", "girls"), ("father", "mother"), ("fathers", "mothers"), ("son", "daughter"),
    ("sons", "daughters"), ("brother", "sister"), ("brothers", "sisters"), ("husband", "wife"),
    ("husbands", "wives"), ("king", "queen"), ("kings", "queens"), ("mr", "mrs"), ("sir", "madam"),
    ("male", "female"), ("males", "females"), ("gentleman", "lady"), ("gentlemen", "ladies"), ("uncle", "aunt"),
    ("nephew", "niece"), ("grandfather", "grandmother"), ("grandson", "granddaughter"), ("dad", "mom"),
    ("boyfriend", "girlfriend"), ("actor", "actress"), ("prince", "princess"), ("guy", "gal"),
    ("masculine", "feminine"), ("fiance", "fiancee"), ("waiter", "waitress"), ("stepfather", "stepmother"),
]
_NAME_PAIRS = [
    ("John", "Mary"), ("James", "Patricia"), ("Michael", "Jennifer"), ("David", "Linda"), ("Robert", "Elizabeth"),
    ("William", "Barbara"), ("Richard", "Susan"), ("Joseph", "Jessica"), ("Thomas", "Sarah"), ("Charles", "Karen"),
    ("Daniel", "Lisa"), ("Mark", "Nancy"), ("Paul", "Sandra"), ("George", "Emily"), ("Peter", "Anna"),
    ("Steven", "Michelle"), ("Kevin", "Laura"), ("Brian", "Rachel"), ("Jack", "Emma"), ("Tom", "Kate"),
    ("Henry", "Alice"), ("Samuel", "Rebecca"), ("Carlos", "Maria"), ("Mohammed", "Fatima"), ("Ahmed", "Aisha"),
    ("Raj", "Priya"), ("Wei", "Mei"), ("Hiroshi", "Yuki"), ("Kwame", "Ama"), ("Ivan", "Olga"),
]


def _swap_table(pairs, *, lower: bool) -> dict[str, str]:
    table: dict[str, str] = {}
    for a, b in pairs:
        a, b = (a.lower(), b.lower()) if lower else (a, b)
        table.setdefault(a, b)
        table.setdefault(b, a)
    return table


_GENDER = _swap_table(_GENDER_PAIRS, lower=True)
_GENDER["her"] = "his"  # "her" is ambiguous (his/him): "his" before a word, "him" before punctuation or the end
_NAMES = _swap_table(_NAME_PAIRS, lower=False)
_GENDER_RE = re.compile(r"\b(" + "|".join(sorted(_GENDER, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_NAME_RE = re.compile(r"\b(" + "|".join(sorted(_NAMES, key=len, reverse=True)) + r")\b")


def gender(text: str, *, key: str = "") -> str | None:
    """Swap gendered words both ways (he ↔ she, his ↔ her, man ↔ woman, …), keeping case."""

    def swap(m: re.Match) -> str:
        word = m.group()
        target = _GENDER[word.lower()]
        if word.lower() == "her":
            rest = text[m.end():].lstrip()
            target = "his" if rest[:1].isalpha() else "him"
        return _match_case(word, target)

    out = _GENDER_RE.sub(swap, text)
    return out if out != text else None


def name(text: str, *, key: str = "") -> str | None:
    """Swap first names between paired lists of men's and women's names (John ↔ Mary, …)."""
    out = _NAME_RE.sub(lambda m: _NAMES[m.group()], text)
    return out if out != text else None


TRANSFORMS = {"typo": typo, "case": case, "punctuation": punctuation, "contraction": contraction,
              "gender": gender, "name": name}


def _apply(fields: dict[str, str], transforms, *, key: str) -> dict[str, str] | None:
    out, changed = {}, False
    for field, value in fields.items():
        text = value if isinstance(value, str) else ("" if value is None else str(value))
        for transform in transforms:
            text = transform(text, key=f"{key}:{field}") or text
        out[field] = text
        changed |= text != value
    return out if changed else None


def robustness_variant(fields: dict[str, str], *, key: str) -> tuple[str, dict[str, str]] | None:
    """Return ``(transform name, perturbed fields)`` for an item, or None when nothing applies.

    The transform is the first of ``ROBUSTNESS`` that changes the text, starting at a
    position fixed by ``key`` (the item uid), so the four kinds are spread over the items.
    """
    start = _key_int(key) % len(ROBUSTNESS)
    for offset in range(len(ROBUSTNESS)):
        kind = ROBUSTNESS[(start + offset) % len(ROBUSTNESS)]
        variant = _apply(fields, [TRANSFORMS[kind]], key=key)
        if variant is not None:
            return kind, variant
    return None


def fairness_variant(fields: dict[str, str], *, key: str) -> dict[str, str] | None:
    """Return the fields with every gendered word and first name swapped, or None when none occur."""
    return _apply(fields, [gender, name], key=key)


def variant_consistency(task, outputs: list[dict], column: list) -> float | None:
    """The kind's ``consistency`` of the variants' outputs with the originals': ``column[i]`` holds the
    outputs of item ``i``'s variants (None or empty: it has none), each paired with ``outputs[i]``;
    None when no item has a variant."""
    original, perturbed = [], []
    for output, variants in zip(outputs, column):
        for variant in variants or ():
            original.append(output)
            perturbed.append(variant)
    return task.spec.consistency(task.config, original, perturbed) if perturbed else None


class TextPerturbations:
    """The ``text`` provider of ``leaderboard/scoring.py``: at most one robustness variant
    (``robustness_variant``) and one fairness variant (``fairness_variant``) per item, rewriting the
    kind's ``perturbable_fields``; fairness is their consistency, as robustness is."""

    def _fields(self, task, model_input: dict) -> dict[str, str]:
        return {f: model_input.get(f, "") for f in task.spec.perturbable_fields(task.config)}

    def robustness_inputs(self, task, item: dict, model_input: dict) -> list[dict]:
        """``[the model input with its robustness variant]``, or [] when no transform changes it."""
        variant = robustness_variant(self._fields(task, model_input), key=item["uid"])
        return [{**model_input, **variant[1]}] if variant else []

    def fairness_inputs(self, task, item: dict, model_input: dict) -> list[dict]:
        """``[the model input with every gendered word and first name swapped]``, or [] when none occur."""
        variant = fairness_variant(self._fields(task, model_input), key=item["uid"])
        return [{**model_input, **variant}] if variant else []

    def counts(self, task, items: list[dict]) -> dict[str, int]:
        """How many ``items`` have a robustness and a fairness variant (no model involved)."""
        counts = {"robustness": 0, "fairness": 0}
        for item in items:
            fields = self._fields(task, task.spec.model_input(task.config, item["input"]))
            counts["robustness"] += robustness_variant(fields, key=item["uid"]) is not None
            counts["fairness"] += fairness_variant(fields, key=item["uid"]) is not None
        return counts

    def fairness(self, task, items: list[dict], outputs: list[dict], fair: list, scores) -> float | None:
        """The consistency of the fairness variants' outputs (``variant_consistency``)."""
        return variant_consistency(task, outputs, fair)
