"""``/api/v1/``: examples, a task's next context, text-to-image attempts, conversations and a round's
diversity report."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from annotation import api_views, chat_api_views, diversity_api_views, t2i_api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("examples", api_views.ExampleViewSet, basename="example")
urlpatterns = [
    path("tasks/<slug:task_code>/context", api_views.TaskContextView.as_view(), name="api-task-context"),
    path("tasks/<slug:task_code>/imagine", t2i_api_views.GenerateImagesView.as_view(), name="api-t2i-generate"),
    path("tasks/<slug:task_code>/imagine/judgments", t2i_api_views.JudgeImagesView.as_view(), name="api-t2i-judge"),
    path("tasks/<slug:task_code>/chat", chat_api_views.StartChatView.as_view(), name="api-chat-start"),
    path("tasks/<slug:task_code>/chat/turns", chat_api_views.ChatTurnView.as_view(), name="api-chat-turn"),
    path("tasks/<slug:task_code>/chat/judgments", chat_api_views.JudgeChatView.as_view(), name="api-chat-judge"),
    path("rounds/<int:round_id>/diversity", diversity_api_views.RoundDiversityView.as_view(), name="api-round-diversity"),
    *router.urls,
]
