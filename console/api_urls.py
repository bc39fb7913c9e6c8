"""``/api/v1/``: the console's read models for task owners."""

from django.urls import path

from console import api_views

urlpatterns = [
    path("tasks/<slug:task_code>/rounds/<int:round_number>/dashboard", api_views.RoundDashboardView.as_view(), name="round-dashboard"),
    path("tasks/<slug:task_code>/rounds/<int:round_number>/unsafe-rates", api_views.UnsafeRatesView.as_view(), name="round-unsafe-rates"),
    path("tasks/<slug:task_code>/people", api_views.TaskPeopleView.as_view(), name="task-people"),
]
