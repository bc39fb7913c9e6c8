"""The owner's console pages: ``/console/`` (the tasks one owns) and ``/tasks/<code>/console/...``."""

from django.urls import path

from console import ai_views, audio_views, crowd_views, diversity_views, endpoint_views, image_views, judge_views, transfer_views, views

app_name = "console"
urlpatterns = [
    path("console/", views.console_home, name="home"),
    path("console/new", views.create_task, name="create_task"),
    path("tasks/<slug:code>/console/", views.settings_page, name="settings"),
    path("tasks/<slug:code>/console/preview", views.settings_preview, name="preview"),
    path("tasks/<slug:code>/console/rounds/", views.rounds_page, name="rounds"),
    path("tasks/<slug:code>/console/rounds/open", views.open_round, name="open_round"),
    path("tasks/<slug:code>/console/endpoints/add", views.add_endpoint, name="add_endpoint"),
    path("tasks/<slug:code>/console/endpoints/<int:model_id>/", endpoint_views.endpoint_page, name="endpoint"),
    path("tasks/<slug:code>/console/endpoints/<int:model_id>/test", endpoint_views.endpoint_test, name="endpoint_test"),
    path("tasks/<slug:code>/console/rounds/<int:number>/close", views.close_round, name="close_round"),
    path("tasks/<slug:code>/console/rounds/<int:number>/loop/<str:action>", views.change_loop, name="loop"),
    path("tasks/<slug:code>/console/rounds/<int:number>/dashboard", views.dashboard, name="round_dashboard"),
    path("tasks/<slug:code>/console/rounds/<int:number>/transfer", transfer_views.measure_transfer, name="measure_transfer"),
    path("tasks/<slug:code>/console/dashboard/", views.dashboard, name="dashboard"),
    path("tasks/<slug:code>/console/rounds/<int:number>/diversity/", diversity_views.diversity_page, name="diversity"),
    path("tasks/<slug:code>/console/rounds/<int:number>/diversity/progress", diversity_views.diversity_progress,
         name="diversity_progress"),
    path("tasks/<slug:code>/console/rounds/<int:number>/ai/", ai_views.ai_page, name="ai_help"),
    path("tasks/<slug:code>/console/rounds/<int:number>/ai/assistant", ai_views.set_assistant, name="ai_assistant"),
    path("tasks/<slug:code>/console/rounds/<int:number>/ai/generate", ai_views.generate, name="ai_generate"),
    path("tasks/<slug:code>/console/rounds/<int:number>/ai/judge", judge_views.set_judge, name="ai_judge"),
    path("tasks/<slug:code>/console/rounds/<int:number>/ai/runs/<int:run_id>", ai_views.run_progress, name="generation_run"),
    path("tasks/<slug:code>/console/uploads/", views.uploads_page, name="uploads"),
    path("tasks/<slug:code>/console/images/", image_views.images_page, name="images"),
    path("tasks/<slug:code>/console/audio/", audio_views.audio_page, name="audio"),
    path("tasks/<slug:code>/console/uploads/<int:upload_id>/", views.upload_detail, name="upload"),
    path("tasks/<slug:code>/console/uploads/<int:upload_id>/preview", views.upload_preview, name="upload_preview"),
    path("tasks/<slug:code>/console/uploads/<int:upload_id>/status", views.upload_status, name="upload_status"),
    path("tasks/<slug:code>/console/people/", views.people_page, name="people"),
    path("tasks/<slug:code>/console/people/role/<str:action>", views.change_role, name="role"),
    path("tasks/<slug:code>/console/people/ban/<str:action>", views.ban, name="ban"),
    path("tasks/<slug:code>/console/people/<str:username>/", views.person_page, name="person"),
    path("tasks/<slug:code>/console/crowd/", crowd_views.crowd_page, name="crowd"),
    path("tasks/<slug:code>/console/crowd/studies/<int:study_id>/", crowd_views.crowd_study, name="crowd_study"),
    path("tasks/<slug:code>/console/crowd/studies/<int:study_id>/token", crowd_views.crowd_study_token, name="crowd_study_token"),
    path("tasks/<slug:code>/console/crowd/quiz/", crowd_views.crowd_quiz, name="crowd_quiz"),
    path("tasks/<slug:code>/console/crowd/quiz/questions", crowd_views.crowd_quiz_item, name="crowd_quiz_item"),
    path("tasks/<slug:code>/console/crowd/quiz/questions/<int:item_id>/delete", crowd_views.crowd_quiz_item_delete,
         name="crowd_quiz_item_delete"),
]
