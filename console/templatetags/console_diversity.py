"""``{% diversity_summary round %}``: the round's Vendi score and its largest cluster on the round dashboard,
with a link to the round's *Diversity* page (``console/diversity_views.py``)."""

from django import template

from annotation.diversity_models import RoundDiversity

register = template.Library()


@register.inclusion_tag("console/_diversity_summary.html")
def diversity_summary(task, round):
    """The template context of ``_diversity_summary.html``: the task, the round and its report (or None)."""
    return {"task": task, "round": round, "diversity": RoundDiversity.objects.filter(round=round).first()}
