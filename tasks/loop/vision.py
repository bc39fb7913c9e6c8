"""In-process image models for the registry (``tasks.loop.registry``): the predictors of the
``image_classification`` and ``visual_question_answering`` kinds. Inputs name images by sha256 (``tasks.data.images``); they are read
from the default storage, preprocessed by the model's own image processor and run in batches of
``batch_size`` images, as the text predictors batch texts.
"""

from __future__ import annotations

import threading

import numpy as np

from dynabench.errors import RuleError
from tasks.loop.model_checks import ModelCheckCode
from tasks.loop.registry import DEFAULT_BATCH_SIZE, ClassificationPredictor, _torch

#: A batch of images is decoded and preprocessed at once; this many per forward by default.
DEFAULT_IMAGE_BATCH_SIZE = 32


class ImageClassificationPredictor(ClassificationPredictor):
    """Image classification with ``AutoModelForImageClassification`` and its image processor.

    ``predict(inputs)``: ``inputs`` are dicts whose single model input field holds an image's
    sha256 (or, for benchmarks and tests, a Pillow image). Returns ``{"label", "probs": {task
    label: softmax probability}}`` per input, in the task's label order. Raises ``RuleError``
    (``model_bad_input``) for a value that names no stored image.
    """

    kind = "image_classification"

    def __init__(self, *, model, tokenizer, model_inputs, device, batch_size=None, labels, task_labels):
        # No tokenizer: ``tokenizer`` is the image processor (``TaskKindSpec.load_processor``).
        self.model = model
        self.tokenizer = self.processor = tokenizer
        self.model_inputs = list(model_inputs)
        self.device = device
        self.batch_size = int(batch_size or min(DEFAULT_BATCH_SIZE, DEFAULT_IMAGE_BATCH_SIZE))
        self.max_length = 0
        self.nbytes = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
        self._tokenizer_lock = threading.Lock()
        self.labels = list(labels)
        self._task_order = [self.labels.index(label) for label in task_labels]
        self.task_labels = list(task_labels)

    def _images(self, inputs) -> list:
        from PIL import Image

        from tasks.data.images import read_images

        if isinstance(inputs, dict) or not hasattr(inputs, "__iter__"):
            raise RuleError(ModelCheckCode.BAD_INPUT, "predict() takes a list of input dicts.")
        name = self.model_inputs[0]
        images, wanted = [], {}
        for n, item in enumerate(inputs):
            value = item.get(name) if isinstance(item, dict) else None
            if isinstance(value, Image.Image):
                images.append(value.convert("RGB"))
                continue
            if not isinstance(value, str) or not value:
                raise RuleError(ModelCheckCode.BAD_INPUT, f"Input {n} needs the image field '{name}' (an image's sha256).", field=name)
            wanted[n] = value
            images.append(None)
        if wanted:
            try:
                loaded = read_images(list(wanted.values()))
            except FileNotFoundError as missing:
                raise RuleError(ModelCheckCode.BAD_INPUT, f"Input: {missing}.", field=name) from None
            for n, image in zip(wanted, loaded):
                images[n] = image
        return images

    def predict(self, inputs, *, batch_size=None):
        images = self._images(inputs)
        n = len(images)
        if n == 0:
            return []
        size = max(1, int(batch_size or self.batch_size))
        probs = np.empty((n, len(self.labels)), dtype=np.float32)
        torch = _torch()
        with torch.inference_mode():
            for start in range(0, n, size):
                with self._tokenizer_lock:
                    pixels = self.processor(images=images[start:start + size], return_tensors="pt")["pixel_values"]
                if self.device.type != "cpu":
                    pixels = pixels.to(self.device, non_blocking=True)
                logits = self.model(pixel_values=pixels).logits
                probs[start:start + size] = logits.float().softmax(-1).cpu().numpy()
        probs = probs[:, self._task_order]
        labels = self.task_labels
        return [{"label": labels[b], "probs": dict(zip(labels, row))} for b, row in zip(probs.argmax(1).tolist(), probs.tolist())]


class VisualQuestionAnsweringPredictor(ImageClassificationPredictor):
    """Visual question answering with ``AutoModelForVisualQuestionAnswering`` (an answer classifier
    such as ViLT) and its processor (image processor plus tokenizer, ``AutoProcessor``).

    ``predict(inputs)``: dicts holding the image field (an image's sha256, or a Pillow image) and the
    question field (text). Images and questions go through the processor together, ``batch_size``
    pairs per forward (questions padded per batch, truncated to the model's text length; images
    resized and padded with a pixel mask by the processor). Returns ``{"answer": the answer of the
    highest logit, "score": its sigmoid}`` per input (ViLT's VQA head is trained with a sigmoid per
    answer). Raises ``RuleError`` (``model_bad_input``) for a missing image or question.
    """

    kind = "visual_question_answering"

    @classmethod
    def for_task(cls, task, hf_config: dict, **common) -> "VisualQuestionAnsweringPredictor":
        """The answer vocabulary is the model's ``id2label`` (``task.spec.check_model_config``)."""
        answers = task.spec.check_model_config(hf_config, task)
        return cls(labels=answers, task_labels=answers, **common)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        text_length = getattr(self.model.config, "max_position_embeddings", None) or 40
        self.max_length = int(min(text_length, 512))

    def _questions(self, inputs) -> list[str]:
        name = self.model_inputs[1]
        questions = []
        for n, item in enumerate(inputs):
            value = item.get(name) if isinstance(item, dict) else None
            if not isinstance(value, str):
                raise RuleError(ModelCheckCode.BAD_INPUT, f"Input {n} needs the text field '{name}' (the question).", field=name)
            questions.append(value)
        return questions

    def predict(self, inputs, *, batch_size=None):
        images = self._images(inputs)
        questions = self._questions(inputs)
        n = len(images)
        if n == 0:
            return []
        size = max(1, int(batch_size or self.batch_size))
        best = np.empty(n, dtype=np.int64)
        scores = np.empty(n, dtype=np.float32)
        torch = _torch()
        with torch.inference_mode():
            for start in range(0, n, size):
                with self._tokenizer_lock:
                    batch = self.processor(
                        images=images[start:start + size], text=questions[start:start + size], padding=True,
                        truncation=True, max_length=self.max_length, return_tensors="pt",
                    )
                if self.device.type != "cpu":
                    batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
                logits = self.model(**batch).logits.float()
                top, where = logits.max(-1)
                best[start:start + size] = where.cpu().numpy()
                scores[start:start + size] = top.sigmoid().cpu().numpy()
        return [{"answer": self.labels[b], "score": float(s)} for b, s in zip(best.tolist(), scores.tolist())]
