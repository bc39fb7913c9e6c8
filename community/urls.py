from django.urls import path

from community import views

app_name = "community"
urlpatterns = [
    path("notifications/", views.notification_list, name="notifications"),
    path("notifications/read/", views.mark_read, name="read_all"),
    path("notifications/<int:pk>/read/", views.mark_read, name="read"),
    path("notifications/preferences/", views.preferences, name="preferences"),
    path("tasks/<slug:code>/badges/", views.task_badges, name="task_badges"),
]
