"""Release pages: public ones under ``/tasks/<code>/releases/``, the owner's under the console."""

from django.urls import path

from releases import views

app_name = "releases"
urlpatterns = [
    path("tasks/<slug:code>/releases/", views.task_releases, name="list"),
    path("tasks/<slug:code>/releases/<str:version>/", views.release_page, name="release"),
    path("tasks/<slug:code>/releases/<str:version>/files/<path:name>", views.release_file, name="file"),
    path("tasks/<slug:code>/releases/<str:version>/hidden/<path:name>", views.hidden_file, name="hidden_file"),
    path("tasks/<slug:code>/console/releases/", views.console_releases, name="console"),
    path("tasks/<slug:code>/console/releases/publish", views.console_publish, name="publish"),
    path("tasks/<slug:code>/console/releases/<int:pk>/status", views.console_progress, name="progress"),
]
