"""A release's README.md is a Hugging Face dataset card: a YAML header with license, task_categories,
language, size_categories, pretty_name and configs, then the Datasheets-for-Datasets sections with
the platform's figures per round (models in the loop, vMER) that the owner cannot edit."""

import yaml
from django.core.files.storage import default_storage

from releases.tests.support import released
from tasks.models import MLModel, Round


def test_the_card_has_the_header_and_figures_from_the_records(dynasent_task, owner):
    round_two = Round.objects.get(task=dynasent_task, number=2)
    round_two.target_models.add(MLModel.objects.create(task=dynasent_task, name="Model 1 (RoBERTa)"))
    release = released(dynasent_task, owner)

    with default_storage.open(release.storage_prefix + "README.md") as handle:
        card = handle.read().decode()
    header = yaml.safe_load(card.split("---\n")[1])

    assert header["license"] == "cc-by-4.0"
    assert header["task_categories"] == ["text-classification"]
    assert header["language"] == ["en"] and header["size_categories"] == ["1K<n<10K"]
    assert header["pretty_name"] == "DynaSent (Dynabench release 1.0.0)"
    assert [c["config_name"] for c in header["configs"]] == ["default", "round1", "round2"]
    for section in ("## Motivation", "## Composition", "## Collection process", "## Preprocessing, cleaning and labelling",
                    "## Uses", "### Limitations", "## Distribution", "## Maintenance", "## Citation"):
        assert section in card
    assert "| 2 | — | — | Model 1 (RoBERTa) | 0 | 0 | — |" in card
    assert release.stats["rounds"][1]["models"] == ["Model 1 (RoBERTa)"]
