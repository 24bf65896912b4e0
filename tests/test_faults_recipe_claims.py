"""The recipe checks that read the run's own artefacts can fail: each judged on the trained
results with one artefact doctored as a run that did something else would have left it.

cal-15b (training batches from the 55,000 training rows), cal-15c (confidence read as the
max softmax of float64 logits) and unc-08b (the epistemic figure is axis 0's, and the wrong
axis gives another) once checked functions defined as what they checked; they now read the
recorded losses, the evaluated figures and the printed figures. (unc-02 is an identity of
the decomposition, counted as the suite's check: claims/properties/test_regression.py.)
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import optax
import pytest
import test_calibration
import test_uncertainty
from fault_tools import claim_body

from uncertainty_claims import data, metrics
from uncertainty_claims.calibration import evaluation
from uncertainty_claims.calibration.models import build_model
from uncertainty_claims.calibration.training import TrainConfig, batch_indices
from uncertainty_claims.numerics import full_precision
from uncertainty_claims.uncertainty import experiment as uncertainty_experiment

pytestmark = pytest.mark.fault


def test_the_results_as_trained_hold(calibration, uncertainty):
    """The undoctored results: the three checks hold (what the doctored runs below must not)."""
    assert claim_body(test_calibration, "cal-15b")(calibration=calibration.faithful).holds
    assert claim_body(test_calibration, "cal-15c")(calibration=calibration.faithful).holds
    assert claim_body(test_uncertainty, "unc-08b")(
        uncertainty=uncertainty.faithful
    ).holds  # its test's body


@full_precision
def _first_loss(net: str, seed: int, images: np.ndarray, labels: np.ndarray) -> float:
    batch = batch_indices(seed, len(images), TrainConfig())[0]
    logits = build_model(net, seed, images)(jnp.asarray(images[batch]))
    target = jnp.asarray(labels[batch], jnp.int32)
    return float(optax.softmax_cross_entropy_with_integer_labels(logits, target).mean())


def test_a_run_trained_on_the_held_out_rows_too_refutes_cal_15b(calibration):
    """A run that drew its batches from all 60,000 Fashion-MNIST training images (the 5,000
    held-out ones among them), its losses recorded as such a run's first step gives them:
    cal-15b is refuted. It once checked only that `batch_indices` (a permutation of the
    training rows' count) stays below that count, which nothing the run did could change."""
    results = calibration.faithful
    train = data.load_fashion_mnist("train")
    everything, labels = data.to_float(train.images), train.labels
    runs = {}
    for net, run in results.runs.items():
        losses = run.train_loss.copy()
        for i, seed in enumerate(run.seeds):
            losses[i, 0] = _first_loss(net, seed, everything, labels)
        runs[net] = dataclasses.replace(run, train_loss=losses)
    judgement = claim_body(test_calibration, "cal-15b")(
        calibration=dataclasses.replace(results, runs=runs)
    )
    assert not judgement.holds, judgement.measured


def _float32_softmax(logits):
    z = np.asarray(logits, dtype=np.float32)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float64)


@pytest.mark.parametrize("doctored", ["float32-softmax", "scaled-confidence"])
def test_confidence_read_otherwise_for_one_net_refutes_cal_15c(calibration, doctored, monkeypatch):
    """The ReLU net's figures evaluated with a float32 softmax, or the Yat net's ECE read
    from its temperature-scaled confidences: cal-15c is refuted. It once compared
    `msp_score` with the max of `softmax`, which `msp_score` is defined as."""
    results = calibration.faithful
    per_seed = dict(results.per_seed)
    if doctored == "float32-softmax":
        with monkeypatch.context() as patch:
            patch.setattr(evaluation.metrics, "softmax", _float32_softmax)
            patch.setattr(metrics.ood, "softmax", _float32_softmax)
            per_seed["relu"] = evaluation.evaluate(results.runs["relu"], results.split)
    else:
        per_seed["yat"] = [{**f, "ece": f["ece_T"]} for f in per_seed["yat"]]
    judgement = claim_body(test_calibration, "cal-15c")(
        calibration=dataclasses.replace(results, per_seed=per_seed)
    )
    assert not judgement.holds, judgement.measured
    net = "relu" if doctored == "float32-softmax" else "yat"
    assert (
        net in judgement.measured and ("yat" if net == "relu" else "relu") not in judgement.measured
    )


def test_epistemic_figures_reduced_over_every_axis_refute_unc_08b(uncertainty, monkeypatch):
    """A run whose printed epistemic figures reduce the MC passes over all of (T, N, 1) at
    once, the guide's pitfall itself: unc-08b is refuted. It once compared two reductions
    it computed itself, whatever the run printed."""

    def wrong_axis(means, variances):
        right = metrics.decompose_variance(means, variances)
        everything = np.full_like(right.epistemic, np.asarray(means, np.float64).var())
        return dataclasses.replace(right, epistemic=everything)

    monkeypatch.setattr(uncertainty_experiment, "decompose_variance", wrong_axis)
    judgement = claim_body(test_uncertainty, "unc-08b")(
        uncertainty=uncertainty.faithful
    )  # its test's body
    assert not judgement.holds, judgement.measured
