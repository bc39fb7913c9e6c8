"""Template filters of the annotation and task pages: safe Markdown and rates as percentages."""

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def safe_markdown(text: str) -> str:
    """Render Markdown to HTML and clean it with nh3 (no scripts, styles or event handlers)."""
    html = markdown_lib.markdown(text or "", extensions=["extra", "sane_lists"])
    return mark_safe(nh3.clean(html, link_rel="noopener noreferrer nofollow"))


@register.filter
def percent(value, digits: int = 1) -> str:
    """Format a rate in [0, 1] as ``"12.5%"``; None (nothing collected) as an em dash."""
    if value is None:
        return "—"
    return f"{value * 100:.{int(digits)}f}%"


@register.filter
def max_length(bound_field) -> int | None:
    """The character cap of a form field rendered with ``data-max-length`` (None without one)."""
    return bound_field.field.widget.attrs.get("data-max-length")


@register.filter
def minutes(seconds) -> str:
    """``"12 minutes"`` (rounded up; at least one) for a number of seconds."""
    n = max(1, -(-int(seconds) // 60))
    return f"{n} minute{'' if n == 1 else 's'}"


@register.filter
def takes_images(task) -> bool:
    """True when ``task`` has a context field of type image (``tasks.data.images.image_context_fields``):
    the console offers its Images section then."""
    from tasks.data.images import image_context_fields

    return bool(image_context_fields(task.config))


@register.filter
def takes_audio(task) -> bool:
    """True when ``task`` has a context field of type audio (``tasks.data.audio.audio_context_fields``):
    the console offers its Audio section then."""
    from tasks.data.audio import audio_context_fields

    return bool(audio_context_fields(task.config))
