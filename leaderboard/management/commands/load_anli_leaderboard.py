"""``manage.py load_anli_leaderboard``: ANLI R1–R3 dev as scoring datasets, eight real models ranked on them."""

from pathlib import Path

from django.core.management.base import BaseCommand

from leaderboard.anli import default_data_dir, load_anli_leaderboard


class Command(BaseCommand):
    help = ("Register ANLI rounds 1–3 dev as scoring datasets of the NLI task, submit the eight models' predictions "
            "in those files as prediction-file submissions and evaluate them (inline by default).")

    def add_arguments(self, parser):
        parser.add_argument("--data-dir", type=Path, default=None, help=f"Folder with ANLI_analysis_r*_dev.csv (default {default_data_dir()}).")
        parser.add_argument("--queue", action="store_true", help="Enqueue the evaluations on RQ instead of running them here.")
        parser.add_argument("--minilm", action="store_true", help="Also submit the default MiniLM NLI model as a model archive and evaluate it (minutes on CPU).")

    def handle(self, *args, data_dir, queue, minilm, **options):
        return load_anli_leaderboard(data_dir=data_dir, inline=not queue, minilm=minilm)
