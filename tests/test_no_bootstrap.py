"""The ensemble trained without its bootstrap (lib/uncertainty/no_bootstrap.py, behind
unc-12b) differs from the recipe's scan-order ensemble in the members' batches alone."""

from __future__ import annotations

import numpy as np
import pytest

from uncertainty_claims.orders.uncertainty import uncertainty_result
from uncertainty_claims.uncertainty.no_bootstrap import all_rows, train_members


def test_given_the_runs_own_resamples_it_is_the_scan_orders_ensemble():
    """The same training on the run's bootstrap rows gives the scan order's ensemble, bit for
    bit: the same initial weights, dropout streams, steps and order."""
    scan = uncertainty_result(0, implementation="scan")
    same = train_members(scan.bootstrap_idx)
    np.testing.assert_array_equal(same["ens_loss"], scan.ens_loss)
    np.testing.assert_array_equal(same["ens_grid_means"], scan.ens_grid_means)


def test_without_the_bootstrap_every_member_sees_every_row_once():
    rows = all_rows()
    assert rows.shape == (5, 120)
    assert all(np.array_equal(row, np.arange(120)) for row in rows)


def test_rows_of_another_shape_are_refused():
    with pytest.raises(
        ValueError, match=r"rows must be \[members, points\] = \(5, 120\); got \(4, 120\)"
    ):
        train_members(np.zeros((4, 120), np.int32))
