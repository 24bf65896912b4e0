"""Print how the guide's figures spread over other root keys and over float noise.

Uses the same cached reruns as the claims (lib/orders/uncertainty.py): root keys
1..20, and 20 float-rounding twins of key 0 (5% of initial weights moved by one
float32 step). Prints, per figure: published, key-0 value, then mean, std, min and
max of each spread.

    .venv/bin/python dev/uncertainty_spread.py [--out spread.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from claim_audit import cache

from uncertainty_claims.cache import keep_results_in
from uncertainty_claims.numerics import request_deterministic_gpu_ops
from uncertainty_claims.orders.uncertainty import spread, uncertainty_result
from uncertainty_claims.uncertainty.experiment import headline_figures
from uncertainty_claims.uncertainty.health import health_figures

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "claims"))
from test_uncertainty import PRINTED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the spreads as JSON here")
    args = parser.parse_args()
    request_deterministic_gpu_ops()  # as conftest.py does: same arithmetic, same cache keys
    keep_results_in(cache.cached)  # the audit's cache: the claims' reruns, read again
    result = uncertainty_result()
    seed0 = {**headline_figures(result), **health_figures(result)}
    spreads = {kind: spread(kind) for kind in ("root_seeds", "float_noise")}
    print(
        f"{'figure':42s} {'published':>9s} {'key 0':>9s} | {'keys 1-20: mean':>15s} {'min':>9s} {'max':>9s} | {'float noise: sd':>15s}"
    )
    for name, value in seed0.items():
        keys, noise = spreads["root_seeds"][name], spreads["float_noise"][name]
        published = f"{PRINTED.get(name, ''):>9s}"
        print(
            f"{name:42s} {published} {value:9.5f} | {keys.mean():15.5f} {keys.min():9.5f} {keys.max():9.5f} | {noise.std(ddof=1):15.5f}"
        )
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(
                {
                    kind: {k: np.asarray(v).tolist() for k, v in s.items()}
                    for kind, s in spreads.items()
                },
                handle,
                indent=1,
            )


if __name__ == "__main__":
    main()
