"""The maintainers' admin for tasks, rounds, contexts, ML model records and datasets.

What needs the apps above this one (a round's example counts and vMER, closing rounds into
datasets, exports, retraining from validated examples) is added by ``validation/admin.py``,
which registers subclasses of ``TaskAdmin`` and ``RoundAdmin`` with those columns and actions.
"""

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.forms.models import BaseInlineFormSet
from django.urls import reverse
from django.utils.html import format_html

from dynabench.admin_tools import BoundedJSONMixin, OwnerScopedAdmin, PrettyJSONField, short
from dynabench.errors import RuleError
from tasks import access
from tasks.models import Context, Dataset, DatasetItem, Endpoint, MLModel, Round, Task, TaskBan, TaskRole, Upload
from tasks.services import publish_labels as publish_dataset_labels
from tasks.services import check_loop, check_loop_models, set_round_status

CONTEXT_INLINE_LIMIT = 25


class TaskAdminForm(forms.ModelForm):
    """The task's fields, plus the ``version`` it was loaded at: a save made after someone else
    changed the task (on the console, the API or here) is refused, as on the console."""

    config = PrettyJSONField(
        help_text="JSON checked against the task config schema (tasks/kinds/config.py) on save; each error names its field."
    )
    loaded_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Task
        exclude = ("version",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["loaded_version"].initial = self.instance.version

    def clean(self):
        cleaned = super().clean()
        loaded = cleaned.get("loaded_version")
        if self.instance.pk and loaded is not None:
            current = Task.objects.filter(pk=self.instance.pk).values_list("version", flat=True).first()
            if current != loaded:
                raise forms.ValidationError(
                    f"Another owner saved this task after you opened it (version {current}, yours {loaded}). "
                    "Reload the page to see their changes, then make yours again."
                )
        return cleaned

    def save(self, commit=True):
        if self.instance.pk:
            self.instance.version = (Task.objects.filter(pk=self.instance.pk).values_list("version", flat=True).first() or 0) + 1
        return super().save(commit=commit)


class RoundInline(admin.TabularInline):
    model = Round
    fields = ("number", "status", "start", "end")
    readonly_fields = ("status",)
    extra = 0
    show_change_link = True
    ordering = ("number",)


@admin.register(Task)
class TaskAdmin(OwnerScopedAdmin):
    form = TaskAdminForm
    list_display = ("code", "name", "kind", "active", "current_round_display", "round_count", "dataset_count", "owner_list")
    list_filter = ("kind", "active", "collecting")
    search_fields = ("code", "name")
    autocomplete_fields = ("owners",)
    inlines = (RoundInline,)
    fieldsets = (
        (None, {"fields": ("code", "name", "kind", "active", "collecting", "owners")}),
        ("Instructions", {"fields": ("instructions", "content_warning", "loaded_version")}),
        ("Configuration", {"fields": ("config",)}),
    )

    def get_queryset(self, request):
        return (
            super().get_queryset(request)
            .annotate(round_count=Count("rounds", distinct=True), dataset_count=Count("datasets", distinct=True))
            .prefetch_related("owners", "rounds")
        )

    def get_readonly_fields(self, request, obj=None):
        return ("code", "kind") if obj is not None else ()

    @admin.display(description="current round")
    def current_round_display(self, obj):
        rounds = sorted(obj.rounds.all(), key=lambda r: -r.number)
        current = next((r for r in rounds if r.status == Round.Status.OPEN), rounds[0] if rounds else None)
        return f"{current.number} ({current.get_status_display().lower()})" if current else "—"

    @admin.display(description="rounds", ordering="round_count")
    def round_count(self, obj):
        return obj.round_count

    @admin.display(description="datasets", ordering="dataset_count")
    def dataset_count(self, obj):
        return obj.dataset_count

    @admin.display(description="owners")
    def owner_list(self, obj):
        return ", ".join(u.username for u in obj.owners.all()) or "—"


class LimitedContextFormSet(BaseInlineFormSet):
    """Only the newest ``CONTEXT_INLINE_LIMIT`` contexts are edited inline; the rest are one link away."""

    def get_queryset(self):
        if not hasattr(self, "_limited_queryset"):
            self._limited_queryset = super().get_queryset().order_by("-id")[:CONTEXT_INLINE_LIMIT]
        return self._limited_queryset


class ContextInline(BoundedJSONMixin, admin.TabularInline):
    model = Context
    formset = LimitedContextFormSet
    fields = ("uid", "data", "tag", "active", "times_used")
    readonly_fields = ("times_used",)
    extra = 0
    show_change_link = True
    verbose_name_plural = f"Contexts (the newest {CONTEXT_INLINE_LIMIT}; see 'all contexts' above for the rest)"


class RoundForm(forms.ModelForm):
    """The admin's round form: the models in the loop pass the same checks as the console's
    (``tasks.services.check_loop``, ``check_loop_models`` for a new round): an open round keeps a model,
    no model that cannot predict a label of the task joins its loop, and another user's endpoint joins
    only with its submitter's consent (``tasks.loop.gate``)."""

    def clean(self):
        cleaned = super().clean()
        try:
            if self.instance.pk is not None and "target_models" in cleaned:
                check_loop(round=self.instance, models=cleaned["target_models"])
            elif cleaned.get("task") is not None and cleaned.get("target_models"):  # a new round
                foreign = [m.name for m in cleaned["target_models"] if m.task_id != cleaned["task"].pk]
                if foreign:
                    raise RuleError("model_not_of_task", f"Models {', '.join(foreign)} belong to another task.")
                check_loop_models(cleaned["task"], list(cleaned["target_models"]))
        except RuleError as refused:
            self.add_error("target_models", refused.message)
        return cleaned


@admin.register(Round)
class RoundAdmin(OwnerScopedAdmin):
    form = RoundForm
    list_display = ("__str__", "task", "number", "status", "start", "end", "models_in_loop", "context_count")
    list_filter = ("status", "task")
    list_select_related = ("task",)
    search_fields = ("task__code", "task__name")
    autocomplete_fields = ("target_models",)
    readonly_fields = ("status", "all_contexts", "created_at")
    fields = ("task", "number", "status", "start", "end", "target_models", "all_contexts", "created_at")
    inlines = (ContextInline,)
    actions = ("open_rounds",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            context_count=Count("contexts", distinct=True), model_count=Count("target_models", distinct=True)
        )

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields + (("task", "number") if obj is not None else ())

    @admin.display(description="models in the loop", ordering="model_count")
    def models_in_loop(self, obj):
        return obj.model_count

    @admin.display(description="contexts", ordering="context_count")
    def context_count(self, obj):
        return obj.context_count

    @admin.display(description="all contexts")
    def all_contexts(self, obj):
        if obj.pk is None:
            return "—"
        url = reverse("admin:tasks_context_changelist") + f"?round__id__exact={obj.pk}"
        return format_html('<a href="{}">{} contexts</a>', url, obj.contexts.count())

    def _set_status(self, request, queryset, status):
        changed = 0
        for round_ in queryset.select_related("task"):
            try:
                before = round_.status
                set_round_status(round=round_, status=status, acting_user=request.user)
                changed += before != status
            except RuleError as exc:
                self.message_user(request, f"{round_}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{changed} round(s) {'opened' if status == Round.Status.OPEN else 'closed'}.", messages.SUCCESS)

    @admin.action(description="Open the selected rounds", permissions=["change"])
    def open_rounds(self, request, queryset):
        self._set_status(request, queryset, Round.Status.OPEN)


@admin.register(Context)
class ContextAdmin(OwnerScopedAdmin):
    list_display = ("uid", "round", "data_preview", "tag", "times_used", "active", "created_at")
    list_filter = ("active", "round__task", "round")
    list_select_related = ("round__task",)
    search_fields = ("uid", "tag", "data")
    autocomplete_fields = ("round",)
    readonly_fields = ("times_used", "created_at")
    actions = ("activate", "deactivate")

    @admin.display(description="data")
    def data_preview(self, obj):
        return short(obj.data)

    @admin.action(description="Serve the selected contexts to annotators", permissions=["change"])
    def activate(self, request, queryset):
        self.message_user(request, f"{queryset.update(active=True)} context(s) activated.", messages.SUCCESS)

    @admin.action(description="Stop serving the selected contexts", permissions=["change"])
    def deactivate(self, request, queryset):
        self.message_user(request, f"{queryset.update(active=False)} context(s) deactivated.", messages.SUCCESS)


class EndpointAdminForm(forms.ModelForm):
    """An endpoint model's connection, checked and saved as on the console and the API
    (``tasks.loop.endpoints.records.check_endpoint_update`` on clean, ``update_endpoint`` on save, by
    ``MLModelAdmin.save_formset``): the allow-list, the parameters, the key's variable name, who may change
    it. The key itself is write-only: typed here, stored encrypted, never shown (empty keeps the stored one)."""

    api_key = forms.CharField(required=False, widget=forms.PasswordInput(render_value=False), help_text="Stored encrypted; never shown. Empty: keep the stored key.")
    remove_key = forms.BooleanField(required=False, label="Remove the key", help_text="Send no key from now on.")
    acting_user = None  # set per request by ``EndpointInline.get_formset``

    class Meta:
        model = Endpoint
        fields = ("base_url", "api", "model_name", "params", "prompt", "api_key_env", "timeout_s", "max_retries", "max_concurrency")

    def changes(self) -> dict:
        """The keyword arguments of ``update_endpoint`` besides the model and the acting user."""
        from tasks.loop.endpoints.records import SETTINGS

        data = self.cleaned_data
        return {**{name: data.get(name) for name in SETTINGS}, "api_key": data.get("api_key") or "",
                "remove_key": bool(data.get("remove_key"))}

    def clean(self):
        from tasks.loop.endpoints.records import check_endpoint_update

        cleaned = super().clean()
        if not self.errors and self.instance.pk:
            try:
                check_endpoint_update(model=self.instance.model, acting_user=self.acting_user, **self.changes())
            except RuleError as refused:
                self.add_error(refused.field if refused.field in self.fields else None, refused.message)
        return cleaned


class EndpointInline(BoundedJSONMixin, admin.StackedInline):
    """The connection of an endpoint model, shown to the people who may change it (``can_edit_endpoint``: the
    task's owners and admins) even without Django's permissions on ``Endpoint``; never added here (the
    console and the API create endpoint models)."""

    model = Endpoint
    form = EndpointAdminForm
    extra = 0
    max_num = 1
    can_delete = False
    readonly_fields = ("key_status", "consents")  # the submitter's consents: only they give them (the API)

    def get_formset(self, request, obj=None, **kwargs):
        kwargs["form"] = type("EndpointAdminFormFor", (self.form,), {"acting_user": request.user})
        return super().get_formset(request, obj, **kwargs)

    def _may_edit(self, request, obj) -> bool:
        """``can_edit_endpoint`` on the parent model; without one (the inline's queryset, built per page whose
        parent the model admin already checked, and always narrowed to that parent) whoever may change models."""
        from tasks.loop.endpoints.records import can_edit_endpoint

        if obj is None:
            return request.user.has_perm("tasks.change_mlmodel")
        return can_edit_endpoint(request.user, obj)

    def has_add_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        return self._may_edit(request, obj) or super().has_view_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return self._may_edit(request, obj)

    @admin.display(description="key")
    def key_status(self, obj):
        from tasks.loop.endpoints.keys import has_api_key

        return "a key is set" if obj.pk and has_api_key(obj) else "no key"


@admin.register(MLModel)
class MLModelAdmin(OwnerScopedAdmin):
    inlines = [EndpointInline]
    list_display = ("name", "task", "owner", "kind", "status", "progress_display", "published", "anonymous", "in_loop_rounds", "created_at")
    list_filter = ("status", "kind", "published", "task")
    list_select_related = ("task", "owner")
    search_fields = ("name", "owner__username", "checksum", "path")
    autocomplete_fields = ("owner",)
    readonly_fields = ("checksum", "progress", "failure_reason", "training_info", "created_at", "updated_at")
    date_hierarchy = "created_at"

    #: What only a superuser changes here: who submitted a model (its consents and owner-only files follow
    #: it), where its artefact lies, what it is and where its life stands (jobs set the status).
    SUPERUSER_FIELDS = ("owner", "path", "kind", "status")

    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        if request.user.is_superuser:
            return fields
        return fields + self.SUPERUSER_FIELDS + (("task",) if obj is not None else ())

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("rounds_in_loop")

    def save_formset(self, request, form, formset, change):
        """The connection goes through ``update_endpoint`` (checksum, leaderboard, breaker), never a bare save."""
        if formset.model is not Endpoint:
            return super().save_formset(request, form, formset, change)
        from tasks.loop.endpoints.records import update_endpoint

        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []  # for the admin's change message
        for inline_form in formset.forms:
            if inline_form.instance.pk and inline_form.has_changed():
                try:
                    update_endpoint(model=form.instance, acting_user=request.user, **inline_form.changes())
                except RuleError as refused:
                    messages.error(request, f"The connection was not saved: {refused.message}")
                else:
                    formset.changed_objects.append((inline_form.instance, inline_form.changed_data))

    @admin.display(description="progress")
    def progress_display(self, obj):
        return f"{obj.progress:.0%}"

    @admin.display(description="in the loop of")
    def in_loop_rounds(self, obj):
        return ", ".join(f"round {r.number}" for r in obj.rounds_in_loop.all()) or "—"


@admin.register(Dataset)
class DatasetAdmin(OwnerScopedAdmin):
    list_display = ("name", "task", "round", "access", "label_visibility", "split", "weight", "live_item_count", "version",
                    "checksum_short", "created_at")
    list_filter = ("access", "label_visibility", "split", "task")
    list_select_related = ("task", "round")
    search_fields = ("name", "description", "source")
    autocomplete_fields = ("round",)
    readonly_fields = ("label_visibility", "labels_published_by", "labels_published_at", "source", "source_checksum", "checksum",
                       "item_count", "version", "created_at", "content_changed_at", "items_link")
    actions = ["publish_labels"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_items=Count("items"))

    @admin.display(description="items", ordering="n_items")
    def live_item_count(self, obj):
        return obj.n_items

    @admin.action(description="Publish the labels of the selected hidden datasets (recorded with your name)")
    def publish_labels(self, request, queryset):
        done = []
        for dataset in queryset.select_related("task"):
            try:
                publish_dataset_labels(dataset=dataset, acting_user=request.user)
                done.append(dataset.name)
            except RuleError as error:
                self.message_user(request, f"{dataset.name}: {error.message}", level="error")
        if done:
            self.message_user(request, f"Labels published: {', '.join(done)}.")

    @admin.display(description="sha256")
    def checksum_short(self, obj):
        return obj.checksum[:12] or "—"

    @admin.display(description="items")
    def items_link(self, obj):
        if obj.pk is None:
            return "—"
        url = reverse("admin:tasks_datasetitem_changelist") + f"?dataset__id__exact={obj.pk}"
        return format_html('<a href="{}">{} items</a>', url, obj.items.count())


@admin.register(DatasetItem)
class DatasetItemAdmin(OwnerScopedAdmin):
    list_display = ("uid", "dataset", "input_preview", "target_preview", "tag")
    list_filter = ("dataset__task", "dataset")
    list_select_related = ("dataset__task",)
    search_fields = ("uid", "tag")
    raw_id_fields = ("dataset",)

    @admin.display(description="input")
    def input_preview(self, obj):
        return short(obj.input)

    @admin.display(description="target")
    def target_preview(self, obj):
        return short(obj.target, 40)



@admin.register(TaskRole)
class TaskRoleAdmin(OwnerScopedAdmin):
    """Role grants on a task; adding and deleting go through ``tasks.access`` (the console's rules)."""

    list_display = ("task", "user", "role", "granted_by", "created_at")
    list_filter = ("role", "task")
    search_fields = ("user__username", "task__code")
    autocomplete_fields = ("user",)
    fields = ("task", "user", "role")

    def save_model(self, request, obj, form, change):
        try:
            access.grant_role(task=obj.task, user=obj.user, role=obj.role, acting_user=request.user)
        except RuleError as refused:
            messages.error(request, refused.message)

    def delete_model(self, request, obj):
        access.revoke_role(task=obj.task, user=obj.user, role=obj.role, acting_user=request.user)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)


@admin.register(TaskBan)
class TaskBanAdmin(OwnerScopedAdmin):
    """Users banned from a task; banning and lifting go through ``tasks.access``."""

    list_display = ("task", "user", "reason", "banned_by", "created_at")
    list_filter = ("task",)
    search_fields = ("user__username",)
    autocomplete_fields = ("user",)
    fields = ("task", "user", "reason")

    def save_model(self, request, obj, form, change):
        try:
            access.ban_user(task=obj.task, user=obj.user, acting_user=request.user, reason=obj.reason)
        except RuleError as refused:
            messages.error(request, refused.message)

    def delete_model(self, request, obj):
        access.lift_ban(task=obj.task, user=obj.user, acting_user=request.user)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)


@admin.register(Upload)
class UploadAdmin(OwnerScopedAdmin):
    """Files uploaded through the console (read-only: import them on the console or the API)."""

    list_display = ("original_name", "task", "target", "rows", "status", "error_count", "uploaded_by", "created_at")
    list_filter = ("status", "target", "task")
    readonly_fields = [f.name for f in Upload._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
