"""Built-in data sets and the train/tune/test split."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.datasets import builtin_names, dataset_from_table, load_builtin, split_dataset
from wsvmgui.errors import InputError
from wsvmgui.evaluation.designs import DESIGNS


def test_every_design_and_sklearn_table_is_offered():
    names = builtin_names()
    assert names[0] == "demo"
    for design in DESIGNS:
        assert f"design:{design}" in names
    for key in ("wine", "iris", "breast_cancer"):
        assert f"sklearn:{key}" in names


@pytest.mark.parametrize("name", [n for n in builtin_names() if n.startswith("design:")])
def test_designs_carry_their_true_probabilities(name):
    ds = load_builtin(name, n=120, seed=3)
    design = DESIGNS[name.split(":")[1]]
    assert ds.X.shape == (120, 2) and ds.p_true.shape == (120, design.n_classes)
    np.testing.assert_allclose(ds.p_true.sum(axis=1), 1.0)
    np.testing.assert_allclose(ds.p_true, design.probabilities(ds.X))
    # same seed, same draw; another seed, another draw
    np.testing.assert_array_equal(load_builtin(name, n=120, seed=3).X, ds.X)
    assert not np.array_equal(load_builtin(name, n=120, seed=4).X, ds.X)


def test_sklearn_tables_and_demo():
    iris = load_builtin("sklearn:iris")
    assert iris.X.shape == (150, 4) and iris.n_classes == 3 and iris.p_true is None
    assert set(iris.classes) == {"setosa", "versicolor", "virginica"}
    wine = load_builtin("sklearn:wine")
    assert wine.X.shape == (178, 13) and wine.n_classes == 3
    bc = load_builtin("sklearn:breast_cancer")
    assert bc.X.shape == (569, 30) and bc.n_classes == 2
    demo = load_builtin("demo")
    assert demo.X.shape == (200, 2) and list(demo.classes) == ["-1", "1"]  # labels are read as text
    with pytest.raises(InputError, match="unknown"):
        load_builtin("sklearn:nope")
    with pytest.raises(InputError, match="unknown design"):
        load_builtin("design:nope")


def test_split_is_a_stratified_partition():
    ds = load_builtin("design:wu2010_ex1", n=300, seed=0)
    sp = split_dataset(ds, tune_fraction=0.2, test_fraction=0.3, seed=7)
    idx = np.concatenate([sp.train.index, sp.tune.index, sp.test.index])
    assert np.array_equal(np.sort(idx), np.arange(300))
    assert (sp.test.size, sp.tune.size, sp.train.size) == (90, 60, 150)
    for part in (sp.train, sp.tune, sp.test):
        shares = np.array([(part.y == c).mean() for c in ds.classes])
        overall = np.array([(ds.y == c).mean() for c in ds.classes])
        assert np.max(np.abs(shares - overall)) < 0.04
        np.testing.assert_array_equal(part.X, ds.X[part.index])
        np.testing.assert_array_equal(part.p_true, ds.p_true[part.index])
    parts = sp.part_of_rows()
    assert set(parts[sp.test.index]) == {"test"}
    again = split_dataset(ds, 0.2, 0.3, seed=7)
    np.testing.assert_array_equal(again.test.index, sp.test.index)
    assert not np.array_equal(split_dataset(ds, 0.2, 0.3, seed=8).test.index, sp.test.index)


def test_standardise_uses_the_training_part():
    ds = load_builtin("sklearn:wine")
    sp = split_dataset(ds, 0.0, 0.25, seed=0, standardise=True)
    np.testing.assert_allclose(sp.train.X.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(sp.train.X.std(axis=0), 1.0)
    # the test part is scaled with the training statistics, not its own
    assert np.max(np.abs(sp.test.X.mean(axis=0))) > 1e-3
    np.testing.assert_allclose(sp.transform(ds.X)[sp.test.index], sp.test.X)
    plain = split_dataset(ds, 0.0, 0.25, seed=0)
    np.testing.assert_array_equal(plain.test.X, ds.X[plain.test.index])


def test_split_rejects_bad_fractions():
    ds = load_builtin("demo")
    with pytest.raises(InputError, match="fraction"):
        split_dataset(ds, 0.0, 1.2)
    with pytest.raises(InputError, match="training"):
        split_dataset(ds, 0.5, 0.45)
    empty_tune = split_dataset(ds, 0.0, 0.0)
    assert empty_tune.tune.size == 0 and empty_tune.test.size == 0


def test_dataset_from_table(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\tlab\n1\t2\tx\n3\t4\ty\n5\t6\tx\n")
    ds = dataset_from_table(path, "lab")
    assert ds.feature_names == ["a", "b"] and list(ds.classes) == ["x", "y"]
    with pytest.raises(InputError, match="single class"):
        dataset_from_table(_one_class(tmp_path), "lab")
    with pytest.raises(InputError, match="not in the table"):
        dataset_from_table(path, "nope")


def _one_class(tmp_path):
    p = tmp_path / "one.csv"
    p.write_text("a,lab\n1,x\n2,x\n")
    return p
