"""Pages of the tasks app: context images and their thumbnails, context audio clips."""

from django.urls import re_path

from tasks import views

app_name = "tasks"
urlpatterns = [
    re_path(r"^tasks/(?P<code>[-\w]+)/images/(?P<sha256>[0-9a-f]{64})$", views.image, name="image"),
    re_path(r"^tasks/(?P<code>[-\w]+)/images/(?P<sha256>[0-9a-f]{64})/thumb$", views.thumbnail, name="image_thumb"),
    re_path(r"^tasks/(?P<code>[-\w]+)/audio/(?P<sha256>[0-9a-f]{64})$", views.clip, name="clip"),
]
