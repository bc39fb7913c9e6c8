"""``/api/v1/``: validations and the next example to validate."""

from rest_framework.routers import DefaultRouter

from validation import api_views

router = DefaultRouter(trailing_slash=False)
router.include_root_view = False
router.register("validations", api_views.ValidationViewSet, basename="validation")
urlpatterns = router.urls
