"""``{% notification_bell %}``: the navigation's link to the notifications with the unread count."""

from django import template

from community.badges import badges_of, badges_of_many
from community.selectors import unread_count

register = template.Library()


@register.inclusion_tag("community/_bell.html", takes_context=True)
def notification_bell(context):
    request = context.get("request")
    user = getattr(request, "user", None)
    return {"unread": unread_count(user) if user is not None else 0}


@register.inclusion_tag("community/_badges.html")
def badges(person):
    """``{% badges person %}``: the badges ``person`` earned (``community.badges.badges_of``)."""
    return {"badges": badges_of(person)}


@register.inclusion_tag("community/_badge_chips.html", takes_context=True)
def round_badges(context, task, person):
    """``{% round_badges task person %}``: in a round's top-annotators list, the badges ``person`` earned
    on ``task`` (none when its owners turned badges off). The list's badges are read once per page
    (``badges_of_many`` over every annotator in the context's ``annotators``), not once per row."""
    if person is None:
        return {"badges": []}
    # Kept on the request (else the render context): validation's page renders each row through an
    # included slot (templates/validation/_annotator_badges.html), and every include starts a new
    # render context.
    key = ("community.round_badges", getattr(task, "pk", None))
    request = context.get("request")
    memo = request.__dict__.setdefault("_community_badges", {}) if request is not None else context.render_context
    if key not in memo:
        people = [p.pk for p, _ in context.get("annotators", []) if p is not None]
        memo[key] = badges_of_many(people, task=task)
    return {"badges": memo[key].get(person.pk) or badges_of_many([person.pk], task=task)[person.pk]}
