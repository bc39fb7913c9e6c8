import pytest

from annotation.models import CrowdStudy, Example, Qualification, QuizItem
from leaderboard.models import EvaluationRun, LeaderboardCache, LeaderboardConfig
from tasks.models import Dataset, DatasetItem, MLModel, TaskBan, TaskRole, Upload
from validation.models import GoldItem, RoundPay, Validation, ValidatorStanding


@pytest.fixture
def one_of_everything(sentiment_task, annotator, validator, admin_user):
    """A row of every entity on the sentiment task, so admin lists and change pages have data to show."""
    round1 = sentiment_task.current_round()
    context = round1.contexts.first()
    model = MLModel.objects.create(task=sentiment_task, owner=admin_user, name="tiny-sentiment", path="/tmp/none")
    round1.target_models.add(model)
    dataset = Dataset.objects.create(task=sentiment_task, round=round1, name="dev", split="dev")
    DatasetItem.objects.create(dataset=dataset, uid="1", input={"text": "Nice"}, target={"label": "positive"})
    example = Example.objects.create(
        round=round1, context=context, author=annotator, input={"text": "Not bad at all"}, target={"label": "positive"},
        model=model, model_output={"label": "negative", "probs": {"positive": 0.2, "negative": 0.7, "neutral": 0.1}},
        model_wrong=True,
    )
    validation = Validation.objects.create(example=example, validator=validator, label="correct")
    run = EvaluationRun.objects.create(model=model, dataset=dataset, status="done", performance=0.5)
    config = LeaderboardConfig.objects.create(task=sentiment_task, owner=admin_user, name="mine", metric_weights={"performance": 4})
    cache = LeaderboardCache.objects.create(task=sentiment_task, rows=[], datasets=[])
    role = TaskRole.objects.create(task=sentiment_task, user=validator, role="annotator", granted_by=admin_user)
    ban = TaskBan.objects.create(task=sentiment_task, user=annotator, reason="spam", banned_by=admin_user)
    upload = Upload.objects.create(
        task=sentiment_task, uploaded_by=admin_user, target="contexts", file="uploads/none.csv", original_name="contexts.csv",
        format="csv", rows=1, columns=["uid", "prompt"], options={"round": 1},
    )
    qualification = Qualification.objects.create(task=sentiment_task, instructions="Read this.")
    QuizItem.objects.create(qualification=qualification, input={"text": "Great"}, answer={"label": "positive"})
    study = CrowdStudy.objects.create(round=round1, platform="prolific", completion_code="CODE")
    gold = GoldItem.objects.create(round=round1, example=example, verdict="correct", created_by=admin_user)
    standing = ValidatorStanding.objects.create(task=sentiment_task, validator=validator, answered=5, correct=2, excluded=True, reason="2 of 5")
    pay = RoundPay.objects.create(round=round1, per_example="0.10")
    return {
        "qualification": qualification, "crowdstudy": study, "golditem": gold, "validatorstanding": standing, "roundpay": pay,
        "taskrole": role, "taskban": ban, "upload": upload,
        "task": sentiment_task, "round": round1, "context": context, "mlmodel": model, "dataset": dataset,
        "datasetitem": dataset.items.first(), "example": example, "validation": validation,
        "evaluationrun": run, "leaderboardconfig": config, "leaderboardcache": cache,
    }
