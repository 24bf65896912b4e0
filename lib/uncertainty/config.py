"""The guide's recipe as one object (docs/RECIPES.md, Uncertainty): every hyperparameter of the
uncertainty experiment lives here and travels whole through training and prediction."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

_DIGITS = re.compile(r"[0-9]+")


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

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> UncertaintyConfig:
        """The recipe scaled as the guide's complete example (examples/advanced/uncertainty.py)
        reads its environment: EPOCHS the MC-Dropout net's steps, the ensemble training for
        twice as many; BATCH the MC-Dropout batch; N_MODELS the ensemble's members;
        MC_SAMPLES the MC-Dropout passes. Each variable left unset keeps its default.

        Raises ValueError naming a variable whose value is not a positive integer.
        """
        knobs = {
            name: _positive(name, environ[name])
            for name in ("EPOCHS", "BATCH", "N_MODELS", "MC_SAMPLES")
            if name in environ
        }
        fields: dict[str, int] = {}
        if "EPOCHS" in knobs:
            fields |= {"mc_steps": knobs["EPOCHS"], "ensemble_steps": 2 * knobs["EPOCHS"]}
        if "BATCH" in knobs:
            fields["mc_batch"] = knobs["BATCH"]
        if "N_MODELS" in knobs:
            fields["members"] = knobs["N_MODELS"]
        if "MC_SAMPLES" in knobs:
            fields["mc_samples"] = knobs["MC_SAMPLES"]
        return cls(**fields)


def _positive(name: str, value: str) -> int:
    if not _DIGITS.fullmatch(value) or int(value) == 0:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


# The guide's log: the MC loss every 100 steps, the ensemble's mean loss every 200.
MC_PRINT_EVERY = 100
ENSEMBLE_PRINT_EVERY = 200
