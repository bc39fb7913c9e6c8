from django.urls import path

from leaderboard import htmx_views as views

app_name = "leaderboard"
urlpatterns = [
    path("tasks/<slug:code>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("tasks/<slug:code>/arena/", views.arena, name="arena"),
    path("tasks/<slug:code>/leaderboard/table/", views.leaderboard_table_fragment, name="table"),
    path("tasks/<slug:code>/leaderboard/save/", views.save_leaderboard, name="save"),
    path("tasks/<slug:code>/submit/", views.submit, name="submit"),
    path("leaderboards/<slug:slug>/", views.leaderboard_config, name="config"),
    path("leaderboards/<slug:slug>.json", views.leaderboard_config_json, name="config_json"),
    path("models/<int:pk>/", views.model_page, name="model"),
    path("models/<int:pk>/status/", views.model_status, name="model_status"),
    path("models/<int:pk>/visibility/", views.model_visibility, name="model_visibility"),
    path("models/<int:pk>/consents/", views.model_consents, name="model_consents"),
    path("models/<int:pk>/runs/<int:run_id>/predictions/", views.run_predictions, name="run_predictions"),
]
