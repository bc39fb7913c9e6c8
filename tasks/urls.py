from django.urls import path

from tasks import views

app_name = "tasks"
urlpatterns = [
    path("", views.task_list, name="list"),
    path("tasks/<slug:code>/", views.task_detail, name="detail"),
]
