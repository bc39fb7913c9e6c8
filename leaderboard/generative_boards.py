"""Leaderboards of generative work judged by people, beside the Dynascore table of a task's
leaderboard page (``/tasks/<code>/leaderboard/``) and in the API
(``GET /api/v1/tasks/<code>/generative``):

- **Text-to-image generators** (a kind whose spec ``generates_images``) ranked by their
  *validated unsafe rate* (``validation.image_judgments.unsafe_rates``: validated unsafe images /
  validated images, Quaye et al., "Adversarial Nibbler", FAccT 2024, section 4), lowest first,
  overall and per harm category, each with a 95% Wilson score interval (E. B. Wilson, "Probable
  inference, the law of succession, and statistical inference", JASA 22(158), 1927). The
  interval treats images as independent; several images of one prompt are not quite, so it is
  somewhat narrow where a generator answers a prompt with many images. Generators whose
  intervals overlap are not shown to differ.
- **Chat models** (a kind whose spec is ``conversational``): the arena board's ratings and its
  generative vMER per model (``leaderboard/arena_board.py``), read from the board the arena's
  job last built.

Both boards show published models only (``leaderboard.arena_board.public_names``: a model that is
not published is on no public board). The generators' board reads every settled judgment of the
task, so it is kept in the Django cache with the stamp of its inputs
(``leaderboard.arena_board.judgments_stamp``) and computed again only when a judgment, a validation,
the task or a model's publication or name changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.core.cache import cache

from leaderboard.arena_board import CachedArena, cached_arena_board, judgments_stamp, public_names
from tasks.kinds.text_to_image import harm_categories
from validation.image_judgments import unsafe_rates

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson_interval(successes: int, n: int, *, z: float = Z95) -> tuple[float | None, float | None]:
    """The Wilson score interval of a proportion ``successes / n`` (95% with the default ``z``):
    ``(centre ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)`` with ``centre = p + z²/2n`` (Wilson,
    JASA 1927). ``(None, None)`` when ``n`` is 0. Raises ``ValueError`` unless ``0 <= successes <= n``."""
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n]; got {successes} of {n}")
    if n == 0:
        return None, None
    p = successes / n
    denominator = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / denominator), min(1.0, (centre + half) / denominator)


@dataclass(frozen=True)
class RateCell:
    """A validated unsafe rate: ``unsafe`` of ``images``, ``rate`` (None without images) and its
    95% Wilson interval ``low``–``high``."""

    unsafe: int
    images: int
    rate: float | None
    low: float | None
    high: float | None


def _cell(unsafe: int, images: int) -> RateCell:
    low, high = wilson_interval(unsafe, images)
    return RateCell(unsafe, images, unsafe / images if images else None, low, high)


@dataclass(frozen=True)
class GeneratorRow:
    """One generator: ``model`` (``{"id", "name"}``), ``rank`` (1 = lowest unsafe rate; equal
    rates share a rank), ``overall`` and ``by_category`` ({category label: ``RateCell``})."""

    model: dict
    rank: int
    overall: RateCell
    by_category: dict


def generator_safety_board(task) -> list[GeneratorRow]:
    """The task's generators ranked by validated unsafe rate, lowest first (module docstring), from
    the cache when its inputs have not changed; ``[]`` for a kind that generates no images.
    Generators without a validated image, and generators that are not published, are left out."""
    if not task.spec.generates_images:
        return []
    stamp = judgments_stamp(task)
    key = f"generator-safety-board:{task.pk}"
    entry = cache.get(key)
    if entry is not None and entry["stamp"] == stamp:
        return entry["rows"]
    rows = compute_generator_safety_board(task)
    cache.set(key, {"stamp": stamp, "rows": rows}, timeout=None)
    return rows


def compute_generator_safety_board(task) -> list[GeneratorRow]:
    """``generator_safety_board`` computed now: one ``unsafe_rates`` read per generator."""
    labels = harm_categories(task.config)
    names = public_names(task)  # published generators only: the others are on no public board
    generators = [rate for rate in unsafe_rates(task).per_generator if rate.images and rate.key in names]
    found = []
    for rate in generators:
        mine = unsafe_rates(task, generator=rate.key)
        by_category = {labels.get(c.key, c.name): _cell(c.unsafe, c.images) for c in mine.per_category}
        found.append(({"id": rate.key, "name": names[rate.key]}, _cell(rate.unsafe, rate.images), by_category))
    found.sort(key=lambda row: (row[1].rate, -row[1].images, row[0]["name"]))
    rows, previous, rank = [], None, 0
    for position, (model, overall, by_category) in enumerate(found, start=1):
        if previous is None or not math.isclose(overall.rate, previous, abs_tol=1e-12):
            rank, previous = position, overall.rate
        rows.append(GeneratorRow(model=model, rank=rank, overall=overall, by_category=by_category))
    return rows


def chat_board(task) -> CachedArena | None:
    """The arena board (ratings and generative vMER) of a conversational task as its job last built
    it (``cached_arena_board``: a changed board queues a rebuild); None for other kinds."""
    if not task.spec.conversational:
        return None
    return cached_arena_board(task)


def as_data(task) -> dict:
    """The task's generative boards as JSON-ready data (the API's body): ``generators`` (rows of
    ``generator_safety_board``) and ``chat`` (ratings and failure rates of the arena board, or None)."""
    def cell(c: RateCell) -> dict:
        return {"unsafe": c.unsafe, "images": c.images, "rate": c.rate, "interval": [c.low, c.high]}

    generators = [{"model": r.model, "rank": r.rank, "unsafe_rate": cell(r.overall),
                   "by_category": {label: cell(c) for label, c in r.by_category.items()}} for r in generator_safety_board(task)]
    state = chat_board(task)
    chat = None
    if state is not None:
        board = state.board
        chat = {"as_of": state.computed_at, "computing": state.computing,
                "ratings": [] if board is None else [{"model": r.model, "rating": r.rating, "interval": [r.rating_low, r.rating_high],
                                                      "rank": r.rank} for r in board.rows],
                "failure_rates": [] if board is None else board.failures}
    return {"task": task.code, "generators": generators, "chat": chat}
