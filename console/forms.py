"""Forms of the owner's console: they parse what the owner typed; the rules live in the services
(``tasks.services``, ``tasks.access``, ``tasks.data.uploads``, ``validation.services``)."""

from django import forms

from dynabench.errors import FieldErrors
from tasks.models import Dataset, Endpoint, MLModel, Round, Upload
from tasks.data.uploads import UID_FROM_CONTENT, UID_FROM_LINE, upload_fields


class FieldErrorsMixin:
    """Show a service's ``FieldErrors`` next to the fields they name (the rest at the top)."""

    def add_field_errors(self, refused: FieldErrors) -> None:
        for field, messages in refused.errors.items():
            for message in messages:
                self.add_error(field if field in self.fields else None, message)


class TaskSettingsForm(FieldErrorsMixin, forms.Form):
    """Name, instructions (Markdown), labels (one per line), validations needed, daily cap,
    content warning, and the version the form was loaded from."""

    name = forms.CharField(max_length=200, required=False)
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 8}), required=False, help_text="Markdown.")
    labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), required=False, help_text="One label per line (classification tasks)."
    )
    validations_needed = forms.IntegerField(help_text="Agreeing validations that settle an example (1-20).")
    removed_labels = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, label="Removed labels",
        help_text="When you remove a label that examples carry, one line each: old=new relabels them, old= marks them "
                  "and keeps them out of the datasets.",
    )
    daily_example_cap = forms.IntegerField(help_text="Examples one person may write per day; 0 for no cap.")
    min_scoring_items = forms.IntegerField(
        label="Smallest scoring set", min_value=1, required=False,
        help_text="The fewest items a round's dev or test set may hold when it closes (smaller: refused, or merged if you ask).",
    )
    content_warning = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), required=False,
        help_text="Shown before a person's first example, e.g. for offensive content. Empty: none.",
    )
    version = forms.IntegerField(widget=forms.HiddenInput)

    def __init__(self, *args, has_labels: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        if not has_labels:
            del self.fields["labels"]
            del self.fields["removed_labels"]

    @staticmethod
    def initial_from(settings: dict) -> dict:
        return {**settings, "labels": "\n".join(settings["labels"])}

    def clean_removed_labels(self) -> dict:
        mapping = {}
        for line in (self.cleaned_data.get("removed_labels") or "").splitlines():
            if not line.strip():
                continue
            old, sep, new = line.partition("=")
            if not sep or not old.strip():
                raise forms.ValidationError(f"'{line.strip()}' is not old=new (or old= to mark the examples).")
            mapping[old.strip()] = new.strip()
        return mapping

    def changes(self) -> dict:
        """The settings to save (``tasks.services.update_task_settings`` keywords), ``removed_labels`` included."""
        data = dict(self.cleaned_data)
        data.pop("version")
        if data.get("min_scoring_items") is None:
            data.pop("min_scoring_items", None)
        if "labels" in data:
            data["labels"] = [line.strip() for line in data["labels"].splitlines() if line.strip()]
        return data


class OpenRoundForm(forms.Form):
    """The models in the loop of the next round and the rule that picks one per example."""

    target_models = forms.ModelMultipleChoiceField(
        queryset=MLModel.objects.none(), widget=forms.CheckboxSelectMultiple, required=False,
        help_text="One or several of this task's model directories or endpoint models.",
    )
    loop_rule = forms.ChoiceField(choices=Round.LoopRule.choices, initial=Round.LoopRule.ROUND_ROBIN, widget=forms.RadioSelect)
    endpoint_call_budget = forms.IntegerField(
        min_value=1, required=False, help_text="Most calls endpoint models may take in this round (empty: no limit).",
    )
    endpoint_token_budget = forms.IntegerField(
        min_value=1, required=False, help_text="Most tokens (prompt + answer) endpoint models may use in this round (empty: no limit).",
    )
    without_model = forms.BooleanField(
        required=False, label="Collect without a model in the loop",
        help_text="Only where the task's kind allows it; otherwise a round needs a model.",
    )
    contexts_from = forms.TypedChoiceField(
        coerce=int, required=False, empty_value=None, label="Contexts", widget=forms.RadioSelect,
        help_text="Carry the active contexts of an earlier round over, or upload new ones after opening (Uploads).",
    )

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        kinds = [MLModel.Kind.HF_DIRECTORY, MLModel.Kind.ENDPOINT]
        self.fields["target_models"].queryset = MLModel.objects.filter(task=task, kind__in=kinds).order_by("-created_at")
        self.fields["target_models"].label_from_instance = (
            lambda m: f"{m.name} (#{m.pk}, {'endpoint, ' if m.is_endpoint else ''}{m.get_status_display().lower()})"
        )
        rounds = list(task.rounds.order_by("-number").values_list("number", flat=True))
        self.fields["contexts_from"].choices = [
            *[(n, f"Carry over the contexts of round {n}") for n in rounds], ("", "None: I will upload them"),
        ]
        if rounds and not self.is_bound:
            self.initial.setdefault("contexts_from", rounds[0])
        if not task.spec.collects_without_model:
            del self.fields["without_model"]


#: The form's fields of each endpoint API's parameters (``clean_params`` checks their values).
TEXT_FIELDS = ("top_p", "max_tokens", "seed", "stop", "system", "user")
TRANSCRIPTION_FIELDS = ("language", "transcription_prompt")


class EndpointModelForm(forms.Form):
    """A model behind an OpenAI-compatible endpoint (``tasks.loop.endpoints.records.create_endpoint_model``) for
    ``task``: the APIs offered are those its kind takes (``spec.endpoint_apis``), and the parameter fields those
    APIs take (generation and prompt for chat and completions; language and prompt for transcriptions). The key
    field is write-only: it is never rendered back."""

    name = forms.CharField(max_length=200)
    base_url = forms.CharField(max_length=500, label="Base URL", help_text="e.g. http://vllm.internal:8000/v1; on DYNABENCH_ENDPOINT_ALLOWLIST.")
    model_name = forms.CharField(max_length=200, label="Model name", help_text="The `model` the server serves.")
    api = forms.ChoiceField(choices=[("chat", "/v1/chat/completions"), ("completions", "/v1/completions")], initial="chat", label="API")
    temperature = forms.FloatField(required=False, min_value=0, max_value=2, initial=0)
    top_p = forms.FloatField(required=False, min_value=0, max_value=1)
    max_tokens = forms.IntegerField(required=False, min_value=1, max_value=4096, initial=64)
    seed = forms.IntegerField(required=False, min_value=0)
    stop = forms.CharField(required=False, max_length=64, help_text="A stop sequence (optional).")
    language = forms.CharField(required=False, max_length=16, help_text="The clips' language, ISO 639-1 (e.g. en); empty: the server detects it.")
    transcription_prompt = forms.CharField(required=False, max_length=1000, widget=forms.Textarea(attrs={"rows": 2}), label="Prompt",
                                           help_text="A hint for the transcriber (names, spelling), sent as 'prompt' (optional).")
    system = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label="System prompt",
                             help_text="Empty: the task kind's default. $labels lists the task's labels.")
    user = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), label="User message template",
                           help_text="Empty: the kind's default; $field puts in a model input, e.g. $text.")
    api_key = forms.CharField(required=False, max_length=1000, label="API key", widget=forms.PasswordInput(render_value=False),
                              help_text="Stored encrypted; never shown again.")
    api_key_env = forms.CharField(required=False, max_length=100, label="…or the key's environment variable",
                                  help_text="Named DYNABENCH_ENDPOINT_KEY_<NAME> on the web and worker machines.")
    timeout_s = forms.FloatField(min_value=1, initial=30, label="Timeout (s)")  # the upper bound: records.check_timeout
    max_retries = forms.IntegerField(min_value=0, max_value=10, initial=3, label="Retries")
    max_concurrency = forms.IntegerField(min_value=1, max_value=64, initial=4, label="Calls at once")
    published = forms.BooleanField(required=False, initial=MLModel.PUBLISHED_BY_DEFAULT, label="Show it on the public boards",
                                   help_text="Every model is published when added, as an uploaded one is: the leaderboard and the arena list "
                                             "published models only. Untick to keep it off them; change it later on the model's page.")

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        apis = task.spec.endpoint_apis
        self.fields["api"].choices = [(api, Endpoint.Api(api).label) for api in apis]
        self.fields["api"].initial = apis[0]
        transcribes = Endpoint.Api.TRANSCRIPTIONS in apis
        for name in (TEXT_FIELDS if set(apis) <= {Endpoint.Api.TRANSCRIPTIONS} else ()) + (() if transcribes else TRANSCRIPTION_FIELDS):
            del self.fields[name]

    def _params_prompt(self) -> tuple[dict, dict]:
        """``(params, prompt)`` from the fields shown: the API's parameters and the chat prompt overrides."""
        data = self.cleaned_data
        params = {k: data[k] for k in ("temperature", "top_p", "max_tokens", "seed", "language") if data.get(k) not in (None, "")}
        if data.get("transcription_prompt"):
            params["prompt"] = data["transcription_prompt"]
        if data.get("stop"):
            params["stop"] = [data["stop"]]
        return params, {k: data[k] for k in ("system", "user") if data.get(k)}

    def arguments(self) -> dict:
        """The keyword arguments of ``create_endpoint_model``."""
        params, prompt = self._params_prompt()
        keys = ("name", "base_url", "model_name", "api", "api_key", "api_key_env", "timeout_s", "max_retries", "max_concurrency",
                "published")
        return {**{k: self.cleaned_data[k] for k in keys}, "params": params, "prompt": prompt}


class EndpointConnectionForm(EndpointModelForm):
    """An endpoint model's connection to change (``tasks.loop.endpoints.records.update_endpoint``): the add form's
    fields but the name, plus *Remove the key*. The key is never rendered back: empty keeps the stored one."""

    remove_key = forms.BooleanField(required=False, label="Remove the key",
                                    help_text="Send no key from now on (the stored key and the variable's name are cleared).")

    def __init__(self, *args, endpoint, **kwargs):
        self.endpoint = endpoint
        params, prompt = endpoint.params or {}, endpoint.prompt or {}
        initial = {name: getattr(endpoint, name) for name in ("base_url", "model_name", "api", "api_key_env", "timeout_s",
                                                              "max_retries", "max_concurrency")}
        initial.update({k: params.get(k) for k in ("temperature", "top_p", "max_tokens", "seed", "language")})
        initial.update(stop=(params.get("stop") or [""])[0], system=prompt.get("system", ""), user=prompt.get("user", ""),
                       transcription_prompt=params.get("prompt", "") if endpoint.api == Endpoint.Api.TRANSCRIPTIONS else "")
        super().__init__(*args, initial=initial, task=endpoint.model.task, **kwargs)
        del self.fields["name"], self.fields["published"]  # publishing is the model page's (leaderboard.services.set_model_visibility)
        self.fields["api_key"].help_text = "Stored encrypted; never shown. Empty: keep the stored key."

    def changes(self) -> dict:
        """The keyword arguments of ``update_endpoint`` (every setting, the key typed, ``remove_key``). Stop
        sequences set through the API beyond the first are kept while the first is unchanged."""
        data = self.cleaned_data
        params, prompt = self._params_prompt()
        stops = list((self.endpoint.params or {}).get("stop") or [])
        if data.get("stop"):
            params["stop"] = stops if stops[:1] == [data["stop"]] else [data["stop"]]
        keys = ("base_url", "model_name", "api", "api_key", "api_key_env", "timeout_s", "max_retries", "max_concurrency", "remove_key")
        return {**{k: data[k] for k in keys}, "params": params, "prompt": prompt}


class LoopModelForm(forms.Form):
    """A model of the task to add to, or take out of, an open round's loop."""

    model = forms.ModelChoiceField(queryset=MLModel.objects.none(), empty_label=None, label="Model")

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        kinds = [MLModel.Kind.HF_DIRECTORY, MLModel.Kind.ENDPOINT]
        self.fields["model"].queryset = MLModel.objects.filter(task=task, kind__in=kinds).order_by("-created_at")
        self.fields["model"].label_from_instance = lambda m: f"{m.name} (#{m.pk}{', endpoint' if m.is_endpoint else ''})"


class UploadForm(FieldErrorsMixin, forms.Form):
    """A contexts or dataset file, and where it goes."""

    target = forms.ChoiceField(choices=Upload.Target.choices, initial=Upload.Target.CONTEXTS)
    round = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, help_text="Contexts: the round they are for.")
    name = forms.CharField(max_length=128, required=False, help_text="Dataset: a slug, e.g. sentiment-r2-extra.")
    split = forms.ChoiceField(choices=Dataset.Split.choices, required=False)
    access = forms.ChoiceField(choices=Dataset.Access.choices, initial=Dataset.Access.SCORING, required=False)
    label_visibility = forms.ChoiceField(
        choices=[("", "Default (hidden for test or scoring sets)"), *Dataset.LabelVisibility.choices], required=False,
        help_text="Hidden labels never leave the server.",
    )
    file = forms.FileField(required=False, help_text="CSV with a header row, or JSON Lines.")

    def __init__(self, *args, task, **kwargs):
        super().__init__(*args, **kwargs)
        rounds = list(task.rounds.order_by("-number").values_list("number", flat=True))
        self.fields["round"].choices = [("", "—")] + [(n, f"Round {n}") for n in rounds]
        if rounds and not self.is_bound:
            self.initial.setdefault("round", rounds[0])

    def options(self) -> dict:
        data = self.cleaned_data
        return {k: data.get(k) for k in ("round", "name", "split", "access", "label_visibility")}


class MappingForm(FieldErrorsMixin, forms.Form):
    """For each task field, the column of the file that holds it; the uid and tag columns."""

    def __init__(self, *args, upload: Upload, **kwargs):
        super().__init__(*args, **kwargs)
        columns = [(c, c) for c in upload.columns]
        for name, label, required in upload_fields(upload):
            self.fields[f"field_{name}"] = forms.ChoiceField(
                label=f"{label} ({name})" if label != name else name, required=False,
                choices=[("", "— required —" if required else "— not imported —"), *columns],
                initial=upload.mapping.get("fields", {}).get(name, ""),
            )
        self.fields["uid"] = forms.ChoiceField(
            label="Row id", required=False,
            choices=[(UID_FROM_CONTENT, "A hash of the content (repeats are skipped)"), (UID_FROM_LINE, "The line number"), *columns],
            initial=upload.mapping.get("uid", UID_FROM_CONTENT),
        )
        self.fields["tag"] = forms.ChoiceField(
            label="Tag", required=False, choices=[("", "— none —"), *columns], initial=upload.mapping.get("tag", "")
        )
        self.field_names = [name for name, _, _ in upload_fields(upload)]

    def add_field_errors(self, refused: FieldErrors) -> None:
        for field, messages in refused.errors.items():
            target = f"field_{field}" if f"field_{field}" in self.fields else field
            for message in messages:
                self.add_error(target if target in self.fields else None, message)

    def mapping(self) -> dict:
        data = self.cleaned_data
        return {
            "fields": {name: data[f"field_{name}"] for name in self.field_names if data.get(f"field_{name}")},
            "uid": data.get("uid") or UID_FROM_CONTENT,
            "tag": data.get("tag") or "",
        }


class PeopleSearchForm(forms.Form):
    q = forms.CharField(max_length=150, required=False, label="Search users")


class RoleForm(forms.Form):
    """Grant or revoke one role (``annotator``, ``validator``, ``owner``) of one user."""

    user = forms.IntegerField(min_value=1)
    role = forms.CharField(max_length=16)


class BanForm(forms.Form):
    user = forms.IntegerField(min_value=1)
    reason = forms.CharField(max_length=500, required=False)


class DefinitionForm(forms.Form):
    """A task definition file (JSON, as ``manage.py create_task`` reads), for ``tasks.data.seed.create_task_from_definition``."""

    MAX_BYTES = 2 * 1024 * 1024
    definition = forms.FileField(
        label="Definition file (.json)",
        help_text="The task's code, name, kind, instructions and config, and optionally its content warning and round 1's "
                  "contexts: the shape of tasks/data/task_definitions/*.json. At most 2 MiB.",
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )

    def clean_definition(self):
        upload = self.cleaned_data["definition"]
        if upload.size > self.MAX_BYTES:
            raise forms.ValidationError("The file is larger than 2 MiB: a definition holds settings and a few contexts; "
                                        "upload more contexts from the console afterwards.")
        return upload.read()

