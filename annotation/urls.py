"""Pages of the crowd annotator: write examples, the sandbox, my examples."""

from django.urls import path

from annotation import htmx_views

app_name = "annotation"
urlpatterns = [
    path("tasks/<slug:code>/write/", htmx_views.create_page, name="create"),
    path("tasks/<slug:code>/write/context", htmx_views.new_context, name="new_context"),
    path("tasks/<slug:code>/write/submit", htmx_views.submit_example, name="submit"),
    path("tasks/<slug:code>/sandbox/", htmx_views.sandbox, name="sandbox"),
    path("my/examples/", htmx_views.my_examples, name="my_examples"),
    path("my/examples/<int:pk>/again", htmx_views.try_again, name="again"),
    path("my/examples/<int:pk>/explain", htmx_views.explain_example, name="explain"),
    path("my/examples/<int:pk>/retract", htmx_views.retract_example, name="retract"),
    path("my/examples/<int:pk>/flag", htmx_views.flag_example, name="flag"),
]
