from rest_framework.routers import DefaultRouter

router = DefaultRouter(trailing_slash=False)
urlpatterns = router.urls
