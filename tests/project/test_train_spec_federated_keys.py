"""A train spec takes the federated keys ``dpstudio train`` has (issue 13): ``fraction``,
``fed_noise``, ``colluding`` and ``dropouts`` save, load back and reach the training run;
without sites they are refused in one line."""

from __future__ import annotations

import shutil

import pytest

from dpstudio.data import sample_path
from dpstudio.project import SpecError, load_spec, save_spec
from dpstudio.project.release_model import train_spec
from dpstudio.project.train_spec import TRAIN_KEYS, train_analysis

KEYS = {"fraction": 0.5, "fed_noise": "skellam", "colluding": 1, "dropouts": 1}


def _data(folder) -> str:
    src = sample_path("health")
    lines = src.read_text(encoding="utf-8").splitlines()[:41]
    path = folder / "health.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(src.with_name(src.name + ".schema.json"), folder / "health.csv.schema.json")
    return str(path)


def test_federated_keys_round_trip_and_reach_the_run(tmp_path):
    assert set(KEYS) <= set(TRAIN_KEYS)
    base = {"dataset": _data(tmp_path), "label": "diabetes", "features": ["age", "bmi"],
            "method": "dpsgd", "epsilon": 2.0, "delta": 1e-6, "fed_variant": "secagg",
            "sites": 6, "rounds": 3}
    spec = train_spec(base | KEYS)
    text = (save_spec(spec, tmp_path / "s.toml")).read_text(encoding="utf-8")
    assert 'fed_noise = "skellam"' in text and "dropouts = 1" in text
    again = load_spec(tmp_path / "s.toml")
    assert again.training == spec.training and again.query == spec.query
    assert {k: again.training[k] for k in KEYS} == KEYS
    federated = train_analysis(again).training.federated
    assert {k: federated[k] for k in KEYS} == KEYS
    with pytest.raises(SpecError) as exc:
        train_spec({k: v for k, v in (base | KEYS).items() if k != "sites"})
    message = str(exc.value)
    assert "\n" not in message and "fraction" in message and "sites" in message
