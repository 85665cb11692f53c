"""Differentially private machine learning (central model): DP-ERM by output perturbation.

``release_logistic(columns, label, features, bounds, epsilon, delta, lam, source)``
fits ℓ₂-regularized logistic regression on features normalized by their declared bounds
and releases the coefficients with exact lattice noise; see :mod:`.erm`. Registry entry:
``dp_erm_logistic`` (kind ``"model"``, query ``"logistic_regression"``).

One module per part: :mod:`.features` (the inputs every learner shares),
:mod:`.logistic` (the solver and its sensitivity), :mod:`.output_perturbation` (the
lattice noise) and :mod:`.erm` (the release and its registry entry). A new learner or
privatization gets its own module beside them: :mod:`.models` (logistic, ridge and a
one-hidden-layer MLP behind one protocol, with their non-private baselines),
:mod:`.objective_perturbation` (Chaudhuri et al. 2011; Kifer et al. 2012) and
:mod:`.dpsgd` (Abadi et al. 2016, a ``run(params, state)`` job), imported from their
modules.
"""

from dpstudio.engine.learning.erm import (
    LogisticERM,
    ModelRelease,
    release_logistic,
    simulate_logistic,
)
from dpstudio.engine.learning.features import INTERCEPT, binary_labels, design_matrix
from dpstudio.engine.learning.logistic import (
    LogisticFit,
    fit_logistic,
    gradient_tolerance,
    sensitivity_l2,
)
from dpstudio.engine.learning.output_perturbation import (
    OutputPerturbation,
    calibrate_output_perturbation,
)

__all__ = [
    "INTERCEPT",
    "LogisticERM",
    "LogisticFit",
    "ModelRelease",
    "OutputPerturbation",
    "binary_labels",
    "calibrate_output_perturbation",
    "design_matrix",
    "fit_logistic",
    "gradient_tolerance",
    "release_logistic",
    "sensitivity_l2",
    "simulate_logistic",
]
