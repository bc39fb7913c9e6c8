from django.urls import path

from community import proposal_views, views

app_name = "community"
urlpatterns = [
    path("notifications/", views.notification_list, name="notifications"),
    path("notifications/read/", views.mark_read, name="read_all"),
    path("notifications/<int:pk>/read/", views.mark_read, name="read"),
    path("notifications/preferences/", views.preferences, name="preferences"),
    path("tasks/<slug:code>/badges/", views.task_badges, name="task_badges"),
    path("proposals/", proposal_views.my_proposals, name="proposals"),
    path("proposals/new/", proposal_views.propose, name="propose"),
    path("proposals/review/", proposal_views.review_queue, name="review_queue"),
    path("proposals/<int:pk>/", proposal_views.proposal_detail, name="proposal"),
    path("proposals/<int:pk>/revise/", proposal_views.revise, name="revise_proposal"),
    path("proposals/<int:pk>/decide/", proposal_views.decide, name="decide_proposal"),
]
