"""Differentially private machine learning (central model): DP-ERM by output perturbation.

``release_logistic(columns, label, features, bounds, epsilon, delta, lam, source)``
fits ℓ₂-regularized logistic regression on features normalized by their declared bounds
and releases the coefficients with exact lattice noise; see :mod:`.erm`. Registry entry:
``dp_erm_logistic`` (kind ``"model"``, query ``"logistic_regression"``).
"""

from dpstudio.engine.learning.erm import (
    INTERCEPT,
    LogisticERM,
    LogisticFit,
    ModelRelease,
    OutputPerturbation,
    binary_labels,
    calibrate_output_perturbation,
    design_matrix,
    fit_logistic,
    gradient_tolerance,
    release_logistic,
    sensitivity_l2,
    simulate_logistic,
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
