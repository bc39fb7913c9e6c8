"""``{% notification_bell %}``: the navigation's link to the notifications with the unread count."""

from django import template

from community.badges import badges_of
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
