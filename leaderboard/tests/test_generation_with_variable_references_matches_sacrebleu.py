"""A translation dataset whose items have one, two or three references, scored with some empty
answers, gets sacreBLEU's own BLEU, chrF++ and spBLEU: the Python API's with the missing
references passed as ``None`` (signature ``nrefs:var``), and the command line's on the same
sentences, to 1e-9 (API) and to the printed precision (command line).

What the command line can and cannot say (read in ``sacrebleu/sacrebleu.py`` 2.6.0 and checked
below): it reads each reference file line by line and keeps an empty line as an *empty
reference* (``""``), never as a missing one, and ``-nr N`` with tab-separated fields does the
same for an empty field; only the Python API drops ``None``. An empty reference has length 0:
it matches an empty answer and lifts the brevity penalty, so a command line given blank lines
for the missing references scores a different (higher) BLEU than sacreBLEU's variable-reference
BLEU. To compare like with like, the command line is given each missing reference as a copy
of the item's first reference: BLEU takes, per n-gram, the largest count over the references
and the reference length closest to the answer's, and chrF++ the reference with the best
F-score, so a repeated reference changes no statistic and the score equals the ``None``-padded
one; only the signature differs (``nrefs:3`` instead of ``nrefs:var``). Items that all have
the same number of references need no padding and are compared with the command line directly,
signature included, through the per-tag scores.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu
from django.core.management import call_command

from leaderboard.models import EvaluationRun
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import evaluate_now, predictions_jsonl
from tasks.models import Task

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "flores-mini.json"
SACREBLEU = [sys.executable, "-m", "sacrebleu"]

# (uid, group tag, references, system answer); empty answers on items with one, two and three references.
ITEMS = [
    ("a-1", "one-ref", ["Le musée ouvre à neuf heures du matin."], ""),
    ("a-2", "one-ref", ["Elle vit dans ce village depuis vingt ans."], "Elle a vécu dans ce village pendant vingt ans."),
    ("a-3", "one-ref", ["Le train a été retardé à cause de la neige."], "Le train était en retard à cause de la neige."),
    ("b-1", "two-ref", ["Nous avons marché le long de la rivière jusqu'au coucher du soleil.",
                        "Nous nous sommes promenés au bord du fleuve jusqu'au crépuscule."],
     "Nous avons marché le long du fleuve jusqu'au coucher du soleil."),
    ("b-2", "two-ref", ["Le comité publiera son rapport la semaine prochaine.",
                        "La commission rendra son rapport public la semaine prochaine."], ""),
    ("b-3", "two-ref", ["Les manchots empereurs se reproduisent pendant l'hiver antarctique.",
                        "C'est pendant l'hiver austral que les manchots empereurs se reproduisent."],
     "Les pingouins empereurs se reproduisent en hiver antarctique."),
    ("c-1", "three-ref", ["Il pleut depuis trois jours.", "La pluie tombe depuis trois jours.",
                          "Cela fait trois jours qu'il pleut."], "Il a plu pendant trois jours."),
    ("c-2", "three-ref", ["Le marché est fermé le lundi.", "Le lundi, le marché est fermé.",
                          "Le marché ne se tient pas le lundi."], ""),
    ("c-3", "three-ref", ["Nous prendrons le bus de huit heures.", "Nous partirons avec le bus de huit heures.",
                          "On prendra le car de huit heures."], "Nous allons prendre le bus de huit heures."),
]


def api_scores(items, *, pad) -> dict:
    """sacreBLEU's Python API on ``items``: ``{metric: (score 0..100, signature)}``, missing references
    given as ``pad`` (``None``: sacreBLEU's variable references; ``""``: empty references)."""
    width = max(len(refs) for _, _, refs, _ in items)
    streams = [[refs[i] if i < len(refs) else pad for _, _, refs, _ in items] for i in range(width)]
    hyps = [hyp for *_, hyp in items]
    out = {}
    for name, metric in {"bleu": sacrebleu.BLEU(), "chrfpp": sacrebleu.CHRF(word_order=2),
                         "spbleu": sacrebleu.BLEU(tokenize="flores200")}.items():
        out[name] = (metric.corpus_score(hyps, streams).score, str(metric.get_signature()))
    return out


def cli(items, tmp_path: Path, home: Path, *, missing: str) -> dict:
    """``sacrebleu REF1 REF2 REF3 -i HYP`` on ``items``: ``{metric: (score, signature)}``. A missing
    reference is written as a blank line (``missing="blank"``) or as the item's first reference
    (``missing="first"``)."""
    width = max(len(refs) for _, _, refs, _ in items)
    refs = []
    for i in range(width):
        path = tmp_path / f"ref{i}.txt"
        path.write_text("".join(
            (r[i] if i < len(r) else (r[0] if missing == "first" else "")) + "\n" for _, _, r, _ in items
        ), encoding="utf-8")
        refs.append(str(path))
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("".join(h + "\n" for *_, h in items), encoding="utf-8")
    env = {**os.environ, "SACREBLEU": str(home)}

    def run(*args):
        out = subprocess.run([*SACREBLEU, *refs, "-i", str(hyp), *args, "-w", "10"],
                             capture_output=True, text=True, check=True, env=env).stdout
        data = json.loads(out)
        return data if isinstance(data, list) else [data]

    bleu, chrf = run("-m", "bleu", "chrf", "--chrf-word-order", "2")
    (spbleu,) = run("-m", "bleu", "-tok", "flores200")
    return {name: (d["score"], d["signature"]) for name, d in (("bleu", bleu), ("chrfpp", chrf), ("spbleu", spbleu))}


@pytest.fixture
def spm_home(tmp_path, monkeypatch):
    """A sacreBLEU home with a SentencePiece model under the FLORES-200 name, trained here on the test
    sentences (no hub is reachable), used by the platform, the API and the command line alike."""
    import sentencepiece
    from sacrebleu.tokenizers import tokenizer_spm

    home = tmp_path / "sacrebleu-home"
    (home / "models").mkdir(parents=True)
    text = [s for _, _, refs, hyp in ITEMS for s in (*refs, hyp) if s]
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(text * 3), model_prefix=str(tmp_path / "spm"), vocab_size=120, hard_vocab_limit=False,
        minloglevel=2,
    )
    (tmp_path / "spm.model").rename(home / "models" / "flores200sacrebleuspm")
    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(home))
    return home


def scored_run(tmp_path, researcher, items, name) -> EvaluationRun:
    """Create the FLORES-style task, import ``items`` (tagged by group) and score ``items``' answers."""
    if not Task.objects.filter(code="flores-mini").exists():
        call_command("create_task", str(DEFINITION))
    task = Task.objects.get(code="flores-mini")
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(
        json.dumps({"uid": uid, "group": group, "source": f"source of {uid}", "references": refs}, ensure_ascii=False) + "\n"
        for uid, group, refs, _ in items
    ), encoding="utf-8")
    call_command("import_dataset", "flores-mini", name, str(data), "--tag", "group",
                 "--map", "language_pair=group", "--no-progress")
    model = submit_predictions(user=researcher, task=task, name=f"system-{name}",
                               upload=predictions_jsonl([{"uid": uid, "translation": hyp} for uid, _, _, hyp in items]))
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model, dataset__name=name)
    assert run.status == "done", run.error
    return run


def test_empty_answers_on_one_and_two_references_score_sacrebleus_variable_reference_bleu(db, researcher, tmp_path, spm_home):
    """The failing case: with ``""`` padding the empty answer matched an empty reference and BLEU was 100."""
    items = [
        ("x-1", "one-ref", ["Le musée ouvre à neuf heures du matin."], ""),
        ("x-2", "two-ref", ["Le comité publiera son rapport la semaine prochaine.",
                            "La commission rendra son rapport public la semaine prochaine."],
         "Le comité publiera son rapport la semaine prochaine."),
    ]
    run = scored_run(tmp_path, researcher, items, "two-items")
    expected = api_scores(items, pad=None)
    for metric in ("bleu", "chrfpp", "spbleu"):
        assert run.metrics[metric] * 100 == pytest.approx(expected[metric][0], abs=1e-9)
        assert run.metric_signatures[metric] == expected[metric][1]
        assert run.metric_signatures[metric].startswith("nrefs:var|")
    assert api_scores(items, pad="")["bleu"][0] == pytest.approx(100.0)  # what the "" padding gave
    assert run.metrics["bleu"] < 0.5


def test_one_two_and_three_references_with_empty_answers_match_the_api_and_the_command_line(db, researcher, tmp_path, spm_home):
    run = scored_run(tmp_path, researcher, ITEMS, "mixed")
    api = api_scores(ITEMS, pad=None)
    for metric in ("bleu", "chrfpp", "spbleu"):
        assert run.metrics[metric] * 100 == pytest.approx(api[metric][0], abs=1e-9)
        assert run.metric_signatures[metric] == api[metric][1]
        assert "nrefs:var|" in run.metric_signatures[metric]

    # The command line, a missing reference given as the item's first one: the same scores.
    same = cli(ITEMS, tmp_path, spm_home, missing="first")
    for metric in ("bleu", "chrfpp", "spbleu"):
        assert run.metrics[metric] * 100 == pytest.approx(same[metric][0], abs=1e-8)
        assert same[metric][1] == run.metric_signatures[metric].replace("nrefs:var|", "nrefs:3|")

    # Blank lines are empty references on the command line, not missing ones: its BLEU is the
    # API's with "" padding, and not sacreBLEU's variable-reference BLEU.
    blank = cli(ITEMS, tmp_path, spm_home, missing="blank")
    empty = api_scores(ITEMS, pad="")
    assert blank["bleu"][0] == pytest.approx(empty["bleu"][0], abs=1e-8)
    assert blank["bleu"][0] > run.metrics["bleu"] * 100 + 1

    # Each group alone has one number of references: the command line as it is, signature included.
    for group, nrefs in (("one-ref", 1), ("two-ref", 2), ("three-ref", 3)):
        subset = [item for item in ITEMS if item[1] == group]
        direct = cli(subset, tmp_path, spm_home, missing="blank")
        assert run.per_tag[group]["n"] == len(subset)
        for metric in ("bleu", "chrfpp", "spbleu"):
            assert run.per_tag[group][metric] * 100 == pytest.approx(direct[metric][0], abs=1e-8)
            assert direct[metric][1] == api_scores(subset, pad=None)[metric][1]
            assert direct[metric][1].startswith(f"nrefs:{nrefs}|")
