from django.urls import path

from validation import crowd_views
from validation import htmx_views as views
from validation import media_export_views

app_name = "validation"
urlpatterns = [
    path("validate/", views.validate_home, name="home"),
    path("tasks/<slug:code>/validate/", views.review_queue, name="queue"),
    path("tasks/<slug:code>/validate/<int:example_id>/", views.submit_validation, name="submit"),
    path("tasks/<slug:code>/validate/<int:example_id>/skip/", views.skip_example, name="skip"),
    path("tasks/<slug:code>/export.jsonl", views.export_task, name="export_task"),
    path("tasks/<slug:code>/judgments/<str:layout>.jsonl", views.export_judgments, name="export_judgments"),
    path("tasks/<slug:code>/rounds/<int:number>/", views.round_page, name="round"),
    path("tasks/<slug:code>/rounds/<int:number>/close/", views.close_round_view, name="close_round"),
    path("tasks/<slug:code>/rounds/<int:number>/export.jsonl", views.export_round, name="export_round"),
    path("tasks/<slug:code>/rounds/<int:number>/croissant.json", views.round_croissant, name="round_croissant"),
    path("tasks/<slug:code>/rounds/<int:number>/export-with-<slug:media>.zip", media_export_views.export_round_with_media,
         name="export_round_media"),
    path("tasks/<slug:code>/rounds/<int:number>/croissant-with-<slug:media>.json", media_export_views.round_media_croissant,
         name="round_media_croissant"),
    path("tasks/<slug:code>/rounds/<int:number>/owner/", views.owner_queue, name="owner_queue"),
    path("tasks/<slug:code>/rounds/<int:number>/owner/<int:example_id>/", views.owner_decide, name="owner_decide"),
    path("tasks/<slug:code>/gold/", crowd_views.gold_page, name="gold"),
    path("tasks/<slug:code>/rounds/<int:number>/pay/", crowd_views.pay_page, name="pay"),
    path("tasks/<slug:code>/rounds/<int:number>/pay/<str:platform>.csv", crowd_views.pay_file, name="pay_file"),
    path("users/<str:username>/", views.user_page, name="user"),
]
