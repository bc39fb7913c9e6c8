"""A FLORES-style evaluation-only translation task scores a predictions file exactly as the
``sacrebleu`` command line scores the same files: BLEU, chrF++ and spBLEU, overall and per
language pair, with the same signature strings stored on the run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import EvaluationRun
from leaderboard.services import submit_predictions
from leaderboard.tests.conftest import evaluate_now, predictions_jsonl
from tasks.models import Task

DEFINITION = Path(__file__).resolve().parents[2] / "tasks" / "data" / "task_definitions" / "flores-mini.json"

# (uid, language pair, source, reference, system output)
ITEMS = [
    ("fr-1", "eng_Latn-fra_Latn", "The museum opens at nine in the morning.", "Le musée ouvre à neuf heures du matin.", "Le musée ouvre à neuf heures le matin."),
    ("fr-2", "eng_Latn-fra_Latn", "We walked along the river until sunset.", "Nous avons marché le long de la rivière jusqu'au coucher du soleil.", "Nous avons marché le long du fleuve jusqu'au coucher du soleil."),
    ("fr-3", "eng_Latn-fra_Latn", "The committee will publish its report next week.", "Le comité publiera son rapport la semaine prochaine.", "Le comité va publier son rapport la semaine prochaine."),
    ("fr-4", "eng_Latn-fra_Latn", "Emperor penguins breed during the Antarctic winter.", "Les manchots empereurs se reproduisent pendant l'hiver antarctique.", "Les pingouins empereurs se reproduisent en hiver antarctique."),
    ("fr-5", "eng_Latn-fra_Latn", "She has lived in this village for twenty years.", "Elle vit dans ce village depuis vingt ans.", "Elle a vécu dans ce village pendant vingt ans."),
    ("fr-6", "eng_Latn-fra_Latn", "The train was delayed because of the snow.", "Le train a été retardé à cause de la neige.", "Le train était en retard à cause de la neige."),
    ("de-1", "eng_Latn-deu_Latn", "The museum opens at nine in the morning.", "Das Museum öffnet um neun Uhr morgens.", "Das Museum öffnet morgens um neun Uhr."),
    ("de-2", "eng_Latn-deu_Latn", "We walked along the river until sunset.", "Wir gingen bis zum Sonnenuntergang am Fluss entlang.", "Wir liefen bis Sonnenuntergang am Fluss entlang."),
    ("de-3", "eng_Latn-deu_Latn", "The committee will publish its report next week.", "Der Ausschuss wird seinen Bericht nächste Woche veröffentlichen.", "Das Komitee veröffentlicht seinen Bericht nächste Woche."),
    ("de-4", "eng_Latn-deu_Latn", "The train was delayed because of the snow.", "Der Zug hatte wegen des Schnees Verspätung.", "Der Zug war wegen dem Schnee verspätet."),
]
SACREBLEU = [sys.executable, "-m", "sacrebleu"]


@pytest.fixture
def spm_home(tmp_path, monkeypatch):
    """A sacreBLEU home with a SentencePiece model installed under the FLORES-200 name (trained here on
    the test sentences: no hub is reachable), used by both the platform and the command line."""
    import sentencepiece
    from sacrebleu.tokenizers import tokenizer_spm

    home = tmp_path / "sacrebleu-home"
    (home / "models").mkdir(parents=True)
    text = [s for _, _, src, ref, hyp in ITEMS for s in (src, ref, hyp)]
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(text * 3), model_prefix=str(tmp_path / "spm"), vocab_size=120, hard_vocab_limit=False,
        minloglevel=2,
    )
    (tmp_path / "spm.model").rename(home / "models" / "flores200sacrebleuspm")
    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(home))
    return home


def cli(ref: Path, hyp: Path, *args, home: Path) -> list[dict]:
    """Run ``sacrebleu REF -i HYP ARGS -w 6`` in a subprocess; return its JSON records (one per metric)."""
    out = subprocess.run(
        [*SACREBLEU, str(ref), "-i", str(hyp), *args, "-w", "6"], capture_output=True, text=True, check=True,
        env={**os.environ, "SACREBLEU": str(home)},
    ).stdout
    data = json.loads(out)
    return data if isinstance(data, list) else [data]


def write_files(tmp_path: Path, rows, name: str) -> tuple[Path, Path]:
    ref, hyp = tmp_path / f"{name}.ref", tmp_path / f"{name}.hyp"
    ref.write_text("".join(r[3] + "\n" for r in rows), encoding="utf-8")
    hyp.write_text("".join(r[4] + "\n" for r in rows), encoding="utf-8")
    return ref, hyp


@pytest.fixture
def flores_task(db, tmp_path):
    """The FLORES-style task created from its definition file, and its test set imported from JSONL."""
    call_command("create_task", str(DEFINITION))
    task = Task.objects.get(code="flores-mini")
    data = tmp_path / "devtest.jsonl"
    data.write_text("".join(
        json.dumps({"uid": uid, "language_pair": pair, "source": src, "references": [ref]}, ensure_ascii=False) + "\n"
        for uid, pair, src, ref, _ in ITEMS
    ), encoding="utf-8")
    call_command("import_dataset", "flores-mini", "flores-mini-devtest", str(data), "--tag", "language_pair",
                 "--map", "language_pair=language_pair", "--no-progress")
    return task


def test_the_task_is_an_evaluation_only_generation_benchmark(flores_task):
    assert (flores_task.kind, flores_task.collecting) == ("generation", False)
    assert not flores_task.rounds.exists()


def test_scores_and_signatures_are_the_command_lines(flores_task, researcher, spm_home, tmp_path):
    rows = [{"uid": uid, "translation": hyp, "language_pair": pair} for uid, pair, _, _, hyp in ITEMS]
    model = submit_predictions(user=researcher, task=flores_task, upload=predictions_jsonl(rows), name="system-a")
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "done", run.error

    ref, hyp = write_files(tmp_path, ITEMS, "all")
    bleu, chrf = cli(ref, hyp, "-m", "bleu", "chrf", "--chrf-word-order", "2", home=spm_home)
    (spbleu,) = cli(ref, hyp, "-m", "bleu", "-tok", "flores200", home=spm_home)
    assert run.metrics["bleu"] * 100 == pytest.approx(bleu["score"], abs=1e-6)
    assert run.metrics["chrfpp"] * 100 == pytest.approx(chrf["score"], abs=1e-6)
    assert run.metrics["spbleu"] * 100 == pytest.approx(spbleu["score"], abs=1e-6)
    assert run.metric_signatures == {"bleu": bleu["signature"], "chrfpp": chrf["signature"], "spbleu": spbleu["signature"]}
    assert "tok:flores200" in run.metric_signatures["spbleu"] and "nw:2" in run.metric_signatures["chrfpp"]
    assert run.performance == run.metrics["chrfpp"]

    for pair in ("eng_Latn-fra_Latn", "eng_Latn-deu_Latn"):
        subset = [r for r in ITEMS if r[1] == pair]
        ref, hyp = write_files(tmp_path, subset, pair)
        bleu, chrf = cli(ref, hyp, "-m", "bleu", "chrf", "--chrf-word-order", "2", home=spm_home)
        assert run.per_tag[pair]["n"] == len(subset)
        assert run.per_tag[pair]["bleu"] * 100 == pytest.approx(bleu["score"], abs=1e-6)
        assert run.per_tag[pair]["chrfpp"] * 100 == pytest.approx(chrf["score"], abs=1e-6)


def test_without_the_flores_model_spbleu_is_left_out_with_the_reason(flores_task, researcher, tmp_path, monkeypatch):
    from sacrebleu.tokenizers import tokenizer_spm

    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(tmp_path / "empty-home"))
    rows = [{"uid": uid, "translation": hyp} for uid, _, _, _, hyp in ITEMS]
    model = submit_predictions(user=researcher, task=flores_task, upload=predictions_jsonl(rows), name="system-b")
    evaluate_now(model)
    run = EvaluationRun.objects.get(model=model)
    assert run.status == "done", run.error
    assert "spbleu" not in run.metrics
    assert run.metric_signatures["spbleu"].startswith("not computed: the FLORES-200 SentencePiece model is not installed")
