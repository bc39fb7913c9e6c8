from django.urls import path

from validation import console_views as console
from validation import crowd_views
from validation import htmx_views as views

app_name = "validation"
urlpatterns = [
    path("validate/", views.validate_home, name="home"),
    path("tasks/<slug:code>/validate/", views.review_queue, name="queue"),
    path("tasks/<slug:code>/validate/<int:example_id>/", views.submit_validation, name="submit"),
    path("tasks/<slug:code>/validate/<int:example_id>/skip/", views.skip_example, name="skip"),
    path("tasks/<slug:code>/export.jsonl", views.export_task, name="export_task"),
    path("tasks/<slug:code>/rounds/<int:number>/", views.round_page, name="round"),
    path("tasks/<slug:code>/rounds/<int:number>/close/", views.close_round_view, name="close_round"),
    path("tasks/<slug:code>/rounds/<int:number>/export.jsonl", views.export_round, name="export_round"),
    path("tasks/<slug:code>/rounds/<int:number>/owner/", views.owner_queue, name="owner_queue"),
    path("tasks/<slug:code>/rounds/<int:number>/owner/<int:example_id>/", views.owner_decide, name="owner_decide"),
    path("tasks/<slug:code>/gold/", crowd_views.gold_page, name="gold"),
    path("tasks/<slug:code>/rounds/<int:number>/pay/", crowd_views.pay_page, name="pay"),
    path("tasks/<slug:code>/rounds/<int:number>/pay/<str:platform>.csv", crowd_views.pay_file, name="pay_file"),
    path("users/<str:username>/", views.user_page, name="user"),
    # the task owner's console
    path("console/", console.console_home, name="console_home"),
    path("tasks/<slug:code>/console/", console.settings_page, name="console_settings"),
    path("tasks/<slug:code>/console/preview", console.settings_preview, name="console_preview"),
    path("tasks/<slug:code>/console/rounds/", console.rounds_page, name="console_rounds"),
    path("tasks/<slug:code>/console/rounds/open", console.open_round, name="console_open_round"),
    path("tasks/<slug:code>/console/rounds/<int:number>/close", console.close_round, name="console_close_round"),
    path("tasks/<slug:code>/console/rounds/<int:number>/dashboard", console.dashboard, name="console_round_dashboard"),
    path("tasks/<slug:code>/console/dashboard/", console.dashboard, name="console_dashboard"),
    path("tasks/<slug:code>/console/uploads/", console.uploads_page, name="console_uploads"),
    path("tasks/<slug:code>/console/uploads/<int:upload_id>/", console.upload_detail, name="console_upload"),
    path("tasks/<slug:code>/console/uploads/<int:upload_id>/preview", console.upload_preview, name="console_upload_preview"),
    path("tasks/<slug:code>/console/uploads/<int:upload_id>/status", console.upload_status, name="console_upload_status"),
    path("tasks/<slug:code>/console/people/", console.people_page, name="console_people"),
    path("tasks/<slug:code>/console/people/role/<str:action>", console.change_role, name="console_role"),
    path("tasks/<slug:code>/console/people/ban/<str:action>", console.ban, name="console_ban"),
    path("tasks/<slug:code>/console/people/<str:username>/", console.person_page, name="console_person"),
]
