"""Red-teaming an image generator (task kinds whose spec ``generates_images``, ``tasks/kinds/text_to_image.py``):
every rule of the text-to-image writing page lives here, for the page and any other surface.

1. ``start``: a context of the open round (a seed prompt someone tried) and the generator in the
   loop (``loop_choice.model_in_loop``: the round's rule picks one of several), as a state.
2. ``generate`` (``agenerate`` in async views, waiting without a thread): the annotator's prompt
   (the task's prompt field rules, the submission rate, the endpoint's round budget) goes to the
   generator (``tasks.loop.image_generation.generate``); every
   image is checked before any is stored, then stored (content hash, thumbnail, storage) and added
   to the state. A generator that fails or answers with something that is not an acceptable image
   is refused with the reason (``RuleError``, 5xx) and nothing is stored.
3. ``judge``: the annotator's marks (which images are unsafe and why, whether the prompt looked
   safe) are checked by the kind (``spec.clean_target``) and stored with the prompt and the images'
   hashes as one ``Example`` (``saving._save_example``: daily cap, tallies, the context's use).

Between the steps the state travels with the page as a token signed by the server
(``annotation.chat_drafts.seal_state``: salted with the user and the task, sealed, valid six hours), so the
annotator cannot swap in images the generator never made, and a token is of no use to anyone else.
A repeated judge with the same token returns the first example (its submission key).
"""

from __future__ import annotations

import random

from asgiref.sync import sync_to_async

from annotation import chat, chat_drafts, contexts, example_checks, limits, loop_choice, saving
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Example
from dynabench import idempotency
from dynabench.errors import RuleError
from tasks.loop import gate, image_generation
from tasks.models import Context, MLModel, Purpose, Task

sign_state, read_state = chat_drafts.seal_state, chat_drafts.open_state


def _check_kind(task: Task) -> None:
    if not task.spec.generates_images:
        raise RuleError("not_text_to_image", f"{task.name} does not generate images.")


def start(*, user, task: Task, tag: str | None = None) -> dict:
    """A new attempt on a context of the open round: ``{"task", "round", "context", "model", "key",
    "prompt": None, "images": [], "generator": None}``. Raises ``RuleError`` when the user may not
    write, the round is closed, or the loop has no generator."""
    _check_kind(task)
    chat._check_writer(user, task)
    round = task.current_round()
    if round is None:
        raise RuleError("no_round", f"{task.name} has no round yet.")
    example_checks._check_open(task, round)
    model = loop_choice.model_in_loop(round)
    context = contexts.choose_context(round=round, tag=tag)
    return {"task": task.pk, "round": round.pk, "context": context.pk, "model": model.pk, "key": idempotency.new_key(),
            "prompt": None, "images": [], "generator": None}


def _context(task: Task, state: dict) -> Context:
    context = Context.objects.select_related("round__task").filter(pk=state.get("context"), round__task=task).first()
    if context is None:
        raise RuleError("chat_expired", "This attempt's context is gone; start a new one.")
    return context


def check_prompt(*, user, task: Task, state: dict, prompt: str) -> tuple[Context, MLModel, str]:
    """The checks of ``generate`` (``RuleError``, before anything is sent): the writer's role, the
    round open, the prompt's rules, the generator still there, the submission rate, its submitter's
    consent to the loop. Returns ``(context, generator, cleaned prompt)``."""
    _check_kind(task)
    chat._check_writer(user, task)
    context = _context(task, state)
    example_checks._check_open(task, context.round, context)
    field = task.spec.prompt_field(task.config)
    text = example_checks.clean_example_input(task=task, context=context, input={field: prompt})[field]
    model = MLModel.objects.filter(pk=state.get("model"), task=task).first()
    if model is None:
        raise RuleError(Code.NO_MODEL_IN_LOOP, "The generator of this attempt was removed; start a new one.", status_code=409)
    limits.check_submission_rate(key=f"user:{user.pk}")
    gate.check_consent([model], Purpose.LOOP, field="prompt")
    return context, model, text


def keep_images(*, task: Task, state: dict, context: Context, model: MLModel, text: str, generated) -> dict:
    """Store the checked images and return the new state (see ``generate``)."""
    stored = image_generation.store(task, generated)
    return {**state, "prompt": text, "images": stored, "generator": generated.generator}


def generate(*, user, task: Task, state: dict, prompt: str) -> dict:
    """Send ``prompt`` to the state's generator and return the new state with the stored images
    (``[{"sha256", "ext", "width", "height"}]``) and the generator's record. A new prompt replaces the
    images of an earlier one (nothing is judged yet). Refusals (``RuleError``): the writer's role,
    the round closed, the prompt's rules, the submission rate, the endpoint's budget, the generator
    failing (503) or answering with bad images (502); nothing is stored then."""
    context, model, text = check_prompt(user=user, task=task, state=state, prompt=prompt)
    with gate.admit(model, Purpose.LOOP, user=user, round=context.round):
        generated = image_generation.generate(model, text, task.config, seed=random.randrange(2**31))
    return keep_images(task=task, state=state, context=context, model=model, text=text, generated=generated)


async def agenerate(*, user, task: Task, state: dict, prompt: str) -> dict:
    """``generate`` for async views: the checks and the storing on the request's thread, and the
    wait for an endpoint generator without a thread (``image_generation.agenerate``)."""
    context, model, text = await sync_to_async(check_prompt)(user=user, task=task, state=state, prompt=prompt)
    async with gate.aadmit(model, Purpose.LOOP, user=user, round=context.round):
        generated = await image_generation.agenerate(model, text, task.config, seed=random.randrange(2**31))
    return await sync_to_async(keep_images)(task=task, state=state, context=context, model=model, text=text, generated=generated)


def judge(*, user, task: Task, state: dict, target: dict, time_spent=None) -> Example:
    """Store the prompt, its images and the annotator's judgment as one example; return it.

    ``target``: ``{"images": [{"sha256", "unsafe", "categories"}], "prompt_looked_safe"}``, checked by
    ``spec.clean_target`` against the images of the state. ``model_wrong`` is the annotator's claim
    (``spec.model_wrong``: an image marked unsafe), confirmed or overturned by validators image by image.
    """
    first = saving._replayed(user=user, submission_key=state.get("key", ""))
    if first is not None:
        return first
    _check_kind(task)
    chat._check_writer(user, task)
    if not state.get("images"):
        raise RuleError("nothing_to_judge", "Write a prompt and generate its images before you judge them.")
    context = _context(task, state)
    example_checks._check_open(task, context.round, context)
    field = task.spec.prompt_field(task.config)
    example_input = {**{f["name"]: context.data.get(f["name"], "") for f in task.config["context_fields"]},
                     field: state["prompt"], "images": [i["sha256"] for i in state["images"]]}
    output = {"images": state["images"], "generator": state["generator"]}
    cleaned = task.spec.clean_target(task.config, example_input, target)
    model = MLModel.objects.filter(pk=state["model"]).first()
    return saving._save_example(
        user=user, context=context, submission_key=state["key"], input=example_input, target=cleaned, model=model,
        model_output=output, model_wrong=task.spec.model_wrong(task.config, cleaned, output), metadata={},
        tag=context.tag or "", time_spent=example_checks._clean_time_spent(time_spent),
    )


def target_from_post(post, images: list[dict]) -> dict:
    """The judgment from the page's form: ``unsafe_<n>`` (``yes``/``no``) and ``categories_<n>`` (a list)
    per image ``n`` (1-based), and ``prompt_looked_safe``."""
    marks = []
    for n, image in enumerate(images, start=1):
        value = post.get(f"unsafe_{n}", "")
        marks.append({"sha256": image["sha256"], "unsafe": value if value else None,
                      "categories": post.getlist(f"categories_{n}")})
    return {"images": marks, "prompt_looked_safe": post.get("prompt_looked_safe", "")}
