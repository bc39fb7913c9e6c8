"""Pages of the crowd annotator: the task list and task pages, write examples, the sandbox, my examples."""

from django.urls import path

from annotation import assist_views, chat_views, crowd_views, diversity_views, htmx_views, t2i_views, upload_views

app_name = "annotation"
urlpatterns = [
    path("", htmx_views.task_list, name="task_list"),
    path("tasks/<slug:code>/", htmx_views.task_detail, name="task_detail"),
    path("tasks/<slug:code>/write/", htmx_views.create_page, name="create"),
    path("tasks/<slug:code>/write/warning", htmx_views.acknowledge_warning, name="acknowledge_warning"),
    path("tasks/<slug:code>/write/context", htmx_views.new_context, name="new_context"),
    path("tasks/<slug:code>/write/submit", htmx_views.submit_example, name="submit"),
    path("tasks/<slug:code>/write/submit-waiting", htmx_views.submit_example_waiting, name="submit_waiting"),
    path("tasks/<slug:code>/write/closeness", diversity_views.closeness, name="closeness"),
    path("tasks/<slug:code>/write/suggest", assist_views.suggest, name="suggest"),
    path("tasks/<slug:code>/chat/", chat_views.chat_page, name="chat"),
    path("tasks/<slug:code>/chat/turn", chat_views.chat_turn, name="chat_turn"),
    path("tasks/<slug:code>/chat/judge", chat_views.chat_judge, name="chat_judge"),
    path("tasks/<slug:code>/chat/examples/<int:pk>/", chat_views.chat_example, name="chat_example"),
    path("tasks/<slug:code>/imagine/", t2i_views.t2i_page, name="t2i"),
    path("tasks/<slug:code>/imagine/generate", t2i_views.t2i_generate, name="t2i_generate"),
    path("tasks/<slug:code>/imagine/judge", t2i_views.t2i_judge, name="t2i_judge"),
    path("tasks/<slug:code>/imagine/examples/<int:pk>/", t2i_views.t2i_example, name="t2i_example"),
    path("tasks/<slug:code>/write/image", upload_views.upload_image, name="upload_image"),
    path("tasks/<slug:code>/write/audio", upload_views.upload_audio, name="upload_audio"),
    path("tasks/<slug:code>/sandbox/", htmx_views.sandbox, name="sandbox"),
    path("tasks/<slug:code>/qualification/", crowd_views.qualification_page, name="qualification"),
    path("crowd/<slug:code>/r<int:number>/<str:platform>/", crowd_views.crowd_entry, name="crowd_entry"),
    path("crowd/<slug:code>/r<int:number>/<str:platform>/progress/", crowd_views.crowd_progress, name="crowd_progress"),
    path("crowd/<slug:code>/r<int:number>/<str:platform>/finish/", crowd_views.crowd_finish, name="crowd_finish"),
    # One study per platform and activity: the activity names it (the three above, without one, are
    # the links of studies made when a round had one study per platform; they still work).
    path("crowd/<slug:code>/r<int:number>/<str:platform>/<str:activity>/", crowd_views.crowd_entry, name="crowd_entry"),
    path("crowd/<slug:code>/r<int:number>/<str:platform>/<str:activity>/progress/", crowd_views.crowd_progress, name="crowd_progress"),
    path("crowd/<slug:code>/r<int:number>/<str:platform>/<str:activity>/finish/", crowd_views.crowd_finish, name="crowd_finish"),
    path("my/examples/", htmx_views.my_examples, name="my_examples"),
    path("my/examples/<int:pk>/again", htmx_views.try_again, name="again"),
    path("my/examples/<int:pk>/explain", htmx_views.explain_example, name="explain"),
    path("my/examples/<int:pk>/retract", htmx_views.retract_example, name="retract"),
    path("my/examples/<int:pk>/flag", htmx_views.flag_example, name="flag"),
]
