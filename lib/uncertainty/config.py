"""The guide's recipe as one object (docs/RECIPES.md, Uncertainty): every hyperparameter of the
uncertainty experiment lives here and travels whole through training and prediction."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class UncertaintyConfig:
    """Hyperparameters of the recipe; the defaults are the guide's."""

    mc_steps: int = 500
    mc_batch: int = 64
    mc_samples: int = 30
    members: int = 5
    ensemble_steps: int = 1000
    lr: float = 1e-2
    dropout_rate: float = 0.1


# The guide's log: the MC loss every 100 steps, the ensemble's mean loss every 200.
MC_PRINT_EVERY = 100
ENSEMBLE_PRINT_EVERY = 200
