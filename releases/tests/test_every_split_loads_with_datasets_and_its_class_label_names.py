"""``datasets.load_dataset("parquet", data_files=...)`` loads every split of a release, with the
data files its card's YAML header names, and gives the task's labels as ``ClassLabel`` names."""

import datasets
import yaml

from releases.tests.support import download_folder, released


def test_every_split_of_the_card_s_configs_loads_with_class_label_names(dynasent_task, owner, tmp_path):
    release = released(dynasent_task, owner)
    folder = download_folder(release, tmp_path / "release")
    header = yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])
    default = next(c for c in header["configs"] if c["config_name"] == "default")
    data_files = {part["split"]: [str(folder / p) for p in part["path"]] for part in default["data_files"]}
    assert list(data_files) == ["dev"]

    loaded = datasets.load_dataset("parquet", data_files=data_files, cache_dir=str(tmp_path / "hf-cache"))

    dev = loaded["dev"]
    assert dev.num_rows == 3600 + 720
    assert isinstance(dev.features["label"], datasets.ClassLabel)
    assert dev.features["label"].names == ["positive", "negative", "neutral"]
    assert dev.features["text"] == datasets.Value("string") and dev.features["round"] == datasets.Value("int32")
    row = dev.filter(lambda r: r["uid"] == "r2-0018536")[0]
    assert dev.features["label"].int2str(row["label"]) == "neutral" and row["round"] == 2

    per_round = next(c for c in header["configs"] if c["config_name"] == "round2")
    round_two = datasets.load_dataset("parquet", data_files={p["split"]: str(folder / p["path"]) for p in per_round["data_files"]},
                                      cache_dir=str(tmp_path / "hf-cache"))
    assert round_two["dev"].num_rows == 720
