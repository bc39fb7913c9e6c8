"""``hotsql.load_row`` builds the same instances as a queryset: every field converted alike."""

from dynabench import hotsql
from tasks.models import Context, MLModel, Round, Task


def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_a_joined_row_loads_as_the_orm_loads_each_model(sentiment_task):
    round = sentiment_task.current_round()
    context = Context.objects.create(round=round, uid="c-1", data={"passage": "Zoë's café", "n": [1, 2.5, None]}, tag="hard")
    sql = (
        f"SELECT {hotsql.select_list(Context, Round)} FROM {hotsql.table(Context)} INNER JOIN {hotsql.table(Round)} "
        f"ON {hotsql.qualified(Round, 'id')} = {hotsql.qualified(Context, 'round')} WHERE {hotsql.qualified(Context, 'id')} = %s"
    )

    ((loaded_context, loaded_round),) = hotsql.fetch_instances(sql, [context.pk], Context, Round)

    assert field_values(loaded_context) == field_values(Context.objects.get(pk=context.pk))
    assert field_values(loaded_round) == field_values(Round.objects.get(pk=round.pk))
    assert loaded_context.data == {"passage": "Zoë's café", "n": [1, 2.5, None]}
    assert loaded_context.created_at.tzinfo is not None
    assert not loaded_context._state.adding  # saved state: .save() updates, not inserts
    loaded_context.tag = "easy"
    loaded_context.save(update_fields=["tag"])
    assert Context.objects.get(pk=context.pk).tag == "easy"


def test_booleans_json_and_nulls_of_a_single_model(sentiment_task):
    model = MLModel.objects.create(task=sentiment_task, name="m", path="/nowhere", training_info={"a": {"b": True}})
    sql = f"SELECT {hotsql.select_list(MLModel)} FROM {hotsql.table(MLModel)} WHERE {hotsql.column(MLModel, 'id')} = %s"

    (loaded,) = hotsql.load_row(hotsql.fetch_one(sql, [model.pk]), MLModel)

    assert field_values(loaded) == field_values(MLModel.objects.get(pk=model.pk))
    assert loaded.training_info == {"a": {"b": True}}


def test_the_collecting_task_is_the_active_task_that_collects(sentiment_task):
    from tasks.selectors import collecting_task

    assert field_values(collecting_task("sentiment")) == field_values(Task.objects.get(pk=sentiment_task.pk))
    Task.objects.filter(pk=sentiment_task.pk).update(collecting=False)
    assert collecting_task("sentiment") is None
    assert collecting_task("no-such-task") is None
