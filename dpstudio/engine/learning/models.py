"""Models a private learner trains: logistic and ridge regression, a one-hidden-layer MLP.

Every model speaks one small protocol, so gradient perturbation (:mod:`.dpsgd`) and the
non-private baselines run on any of them:

- ``dimension``: the number of parameters d (one flat vector θ ∈ ℝᵈ);
- ``init(seed)``: starting parameters (zeros for the convex models, a seeded draw for the
  MLP);
- ``predict(theta, X)``: P(y = 1 | x) for a classifier, the fitted value for ridge;
- ``losses(theta, X, y)``: the per-example loss, shape (n,);
- ``per_example_gradients(theta, X, y)``: the gradient of each example's loss, shape
  (n, d), vectorized (no per-example Python loop; the MLP's by batched products);
- ``gradient(theta, X, y)``: the gradient of the regularized objective
  F(θ) = (1/n) Σᵢ ℓ(θ; xᵢ, yᵢ) + (λ/2)‖θ‖₂², without building the n × d matrix;
- ``objective(theta, X, y)``: F(θ).

Rows are the ones :func:`~dpstudio.engine.learning.features.design_matrix` makes
(‖x‖₂ ≤ 1, the intercept a feature of its own), classification labels ±1
(:func:`~dpstudio.engine.learning.features.binary_labels`) and regression labels mapped by
their declared bounds to [−1, 1] (:func:`regression_labels`). The per-example gradients
carry the loss only: DP-SGD clips them and adds the regularizer's gradient λθ, which reads
no data, after the noise.

:func:`fit_baseline` solves each model without privacy: logistic regression by the
certified Newton solver of :mod:`.logistic`, ridge by L-BFGS to a gradient tolerance, the
MLP by full-batch L-BFGS from a seeded start (a local minimum; the seed makes it
reproducible).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from dpstudio.engine.checks import bounds_pair, count
from dpstudio.engine.errors import ParameterError, QueryError
from dpstudio.engine.learning.features import _validate_lambda
from dpstudio.engine.learning.logistic import fit_logistic

__all__ = [
    "ACTIVATIONS",
    "Baseline",
    "LinearModel",
    "LogisticModel",
    "MLPModel",
    "Model",
    "fit_baseline",
    "make_model",
    "regression_labels",
]

ACTIVATIONS = ("tanh", "relu")
_BASELINE_GTOL = 1e-10  # ‖∇F‖∞ at which L-BFGS stops for the convex baselines
_MLP_MAXITER = 2000


def regression_labels(values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """A numeric label mapped by its declared bounds to [−1, 1] (clipped), as the features.

    Parameters
    ----------
    values : array_like, 1-d
        The label column.
    bounds : (float, float)
        Its declared (lower, upper), never read off the data.

    Returns
    -------
    numpy.ndarray of float64
        2(y − lower)/(upper − lower) − 1, clipped to [−1, 1].

    Raises
    ------
    QueryError
        If the column is not 1-d, not numeric or has missing values.
    ParameterError
        If the bounds are invalid.
    """
    lo, hi = bounds_pair(bounds)
    try:
        y = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise QueryError("the label must be numeric for a regression") from None
    if y.ndim != 1:
        raise QueryError("the label must be one column")
    if np.isnan(y).any():
        raise QueryError("the label has missing values: drop or impute them first")
    return np.clip(2.0 * (y - lo) / (hi - lo) - 1.0, -1.0, 1.0)


class Model:
    """The protocol every model follows (see the module's docstring).

    Attributes
    ----------
    name : str
        ``"logistic"``, ``"linear"`` or ``"mlp"``.
    task : str
        ``"classification"`` or ``"regression"``.
    features : int
        p, the number of columns of X (features plus intercept).
    lam : float
        λ ≥ 0 of the ℓ₂ regularizer (λ/2)‖θ‖₂².
    """

    name = ""
    task = ""

    def __init__(self, features: int, lam: float) -> None:
        self.features = count("the number of features", features)
        self.lam = 0.0 if lam == 0 else _validate_lambda(lam)

    @property
    def dimension(self) -> int:
        """d, the number of parameters."""
        return self.features

    def init(self, seed: int = 0) -> np.ndarray:
        """Starting parameters: zeros (convex models need no random start).

        Parameters
        ----------
        seed : int, optional
            Ignored by the convex models.

        Returns
        -------
        numpy.ndarray, shape (d,)
        """
        return np.zeros(self.dimension)

    def _check(self, theta, X) -> tuple[np.ndarray, np.ndarray]:
        theta = np.asarray(theta, dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        if theta.shape != (self.dimension,):
            raise ParameterError(f"θ must have {self.dimension} parameters, got shape "
                                 f"{theta.shape}")
        if X.ndim != 2 or X.shape[1] != self.features:
            raise QueryError(f"the design matrix must have {self.features} columns")
        return theta, X

    def losses(self, theta, X, y) -> np.ndarray:
        """Per-example loss ℓ(θ; xᵢ, yᵢ).

        Parameters
        ----------
        theta : numpy.ndarray, shape (d,)
            Parameters.
        X : numpy.ndarray, shape (n, p)
            Rows.
        y : numpy.ndarray, shape (n,)
            Labels.

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        raise NotImplementedError

    def per_example_gradients(self, theta, X, y) -> np.ndarray:
        """∇θ ℓ(θ; xᵢ, yᵢ) of each example (the loss only, no regularizer).

        Parameters
        ----------
        theta, X, y
            As :meth:`losses`.

        Returns
        -------
        numpy.ndarray, shape (n, d)
        """
        raise NotImplementedError

    def objective(self, theta, X, y) -> float:
        """F(θ) = mean loss + (λ/2)‖θ‖₂².

        Parameters
        ----------
        theta, X, y
            As :meth:`losses`.

        Returns
        -------
        float
        """
        theta = np.asarray(theta, dtype=np.float64)
        return float(np.mean(self.losses(theta, X, y)) + 0.5 * self.lam * theta @ theta)

    def gradient(self, theta, X, y) -> np.ndarray:
        """∇F(θ): the averaged loss gradient plus λθ.

        Parameters
        ----------
        theta, X, y
            As :meth:`losses`.

        Returns
        -------
        numpy.ndarray, shape (d,)
        """
        theta = np.asarray(theta, dtype=np.float64)
        return self._mean_loss_gradient(theta, X, y) + self.lam * theta

    def _mean_loss_gradient(self, theta, X, y) -> np.ndarray:
        return self.per_example_gradients(theta, X, y).mean(axis=0)

    def predict(self, theta, X) -> np.ndarray:
        """P(y = 1 | x) for a classifier, the fitted value for a regression.

        Parameters
        ----------
        theta : numpy.ndarray, shape (d,)
            Parameters.
        X : numpy.ndarray, shape (n, p)
            Rows.

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        raise NotImplementedError


class LogisticModel(Model):
    """ℓ₂-regularized logistic regression: ℓ = log(1 + exp(−y θᵀx)), labels ±1.

    The same objective as :mod:`.logistic`; its baseline is that module's certified
    solver.

    Parameters
    ----------
    features : int
        p, columns of X.
    lam : float
        λ ≥ 0.

    Attributes
    ----------
    name, task, features, lam
        As :class:`Model`.
    """

    name = "logistic"
    task = "classification"

    def losses(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return np.logaddexp(0.0, -y * (X @ theta))

    def _slopes(self, theta, X, y) -> np.ndarray:
        # dℓ/dz at z = θᵀx: −y·σ(−y z), in [−1, 1], so ‖∇ℓ‖ ≤ ‖x‖ ≤ 1.
        return -y * expit(-y * (X @ theta))

    def per_example_gradients(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return self._slopes(theta, X, y)[:, None] * X

    def _mean_loss_gradient(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return X.T @ self._slopes(theta, X, y) / X.shape[0]

    def predict(self, theta, X) -> np.ndarray:
        theta, X = self._check(theta, X)
        return expit(X @ theta)


class LinearModel(Model):
    """Ridge (linear) regression: ℓ = ½(y − θᵀx)², labels in [−1, 1].

    Parameters
    ----------
    features : int
        p, columns of X.
    lam : float
        λ ≥ 0.

    Attributes
    ----------
    name, task, features, lam
        As :class:`Model`.
    """

    name = "linear"
    task = "regression"

    def losses(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return 0.5 * (X @ theta - y) ** 2

    def per_example_gradients(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return (X @ theta - y)[:, None] * X

    def _mean_loss_gradient(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return X.T @ (X @ theta - y) / X.shape[0]

    def predict(self, theta, X) -> np.ndarray:
        theta, X = self._check(theta, X)
        return X @ theta

    def closed_form(self, X, y) -> np.ndarray:
        """The exact minimizer (XᵀX/n + λI)⁻¹ Xᵀy/n (for tests and small p).

        Parameters
        ----------
        X : numpy.ndarray, shape (n, p)
            Rows.
        y : numpy.ndarray, shape (n,)
            Labels.

        Returns
        -------
        numpy.ndarray, shape (p,)
        """
        n = X.shape[0]
        return np.linalg.solve(X.T @ X / n + self.lam * np.eye(self.features), X.T @ y / n)


class MLPModel(Model):
    """A one-hidden-layer classifier: z = w₂ᵀ a(W₁ᵀx) + b₂, ℓ = log(1 + exp(−y z)).

    θ is W₁ (p × H, row-major), then w₂ (H), then b₂; the intercept column of X acts as
    the hidden layer's bias. Per-example gradients come from batched outer products
    (``einsum``), never a loop over examples.

    Parameters
    ----------
    features : int
        p, columns of X.
    lam : float
        λ ≥ 0.
    hidden : int
        H, the width of the hidden layer, ≥ 1.
    activation : {"tanh", "relu"}
        The hidden layer's activation.

    Attributes
    ----------
    name, task, features, lam
        As :class:`Model`.
    hidden : int
        H.
    activation : str
        As given.
    """

    name = "mlp"
    task = "classification"

    def __init__(self, features: int, lam: float, hidden: int = 16,
                 activation: str = "tanh") -> None:
        super().__init__(features, lam)
        self.hidden = count("the hidden width", hidden)
        if activation not in ACTIVATIONS:
            raise ParameterError(f"the activation must be one of {', '.join(ACTIVATIONS)}, "
                                 f"got {activation!r}")
        self.activation = activation

    @property
    def dimension(self) -> int:
        """d = pH + H + 1."""
        return self.features * self.hidden + self.hidden + 1

    def init(self, seed: int = 0) -> np.ndarray:
        """Seeded start: W₁ ~ N(0, 2²) (rows have ‖x‖ ≤ 1, typically ‖x‖² ≈ 1/3, so
        pre-activations are O(1) and tanh is not stuck in its linear part),
        w₂ ~ N(0, 1/H), b₂ = 0.

        Parameters
        ----------
        seed : int, optional
            The seed of the draw (the start is public: it reads no data).

        Returns
        -------
        numpy.ndarray, shape (d,)
        """
        gen = np.random.default_rng(seed)
        w1 = gen.normal(scale=2.0, size=self.features * self.hidden)
        w2 = gen.normal(scale=1.0 / math.sqrt(self.hidden), size=self.hidden)
        return np.concatenate([w1, w2, [0.0]])

    def _unpack(self, theta):
        p, h = self.features, self.hidden
        return theta[:p * h].reshape(p, h), theta[p * h:p * h + h], theta[-1]

    def _forward(self, theta, X):
        w1, w2, b2 = self._unpack(theta)
        pre = X @ w1
        hid = np.tanh(pre) if self.activation == "tanh" else np.maximum(pre, 0.0)
        return pre, hid, hid @ w2 + b2

    def _backward(self, theta, X, y):
        """Slopes dℓ/dz (n,), hidden activations (n, H) and δ = dℓ/d(pre) (n, H)."""
        w1, w2, _ = self._unpack(theta)
        pre, hid, z = self._forward(theta, X)
        s = -y * expit(-y * z)
        deriv = 1.0 - hid * hid if self.activation == "tanh" else (pre > 0).astype(float)
        return s, hid, s[:, None] * w2[None, :] * deriv

    def losses(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        return np.logaddexp(0.0, -y * self._forward(theta, X)[2])

    def per_example_gradients(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        s, hid, delta = self._backward(theta, X, y)
        n = X.shape[0]
        g_w1 = np.einsum("np,nh->nph", X, delta).reshape(n, -1)
        return np.concatenate([g_w1, s[:, None] * hid, s[:, None]], axis=1)

    def _mean_loss_gradient(self, theta, X, y) -> np.ndarray:
        theta, X = self._check(theta, X)
        s, hid, delta = self._backward(theta, X, y)
        n = X.shape[0]
        return np.concatenate([(X.T @ delta).ravel() / n, hid.T @ s / n, [s.mean()]])

    def predict(self, theta, X) -> np.ndarray:
        theta, X = self._check(theta, X)
        return expit(self._forward(theta, X)[2])


def make_model(name: str, features: int, lam: float, hidden: int = 16,
               activation: str = "tanh") -> Model:
    """The model called ``name``: ``"logistic"``, ``"linear"`` or ``"mlp"``.

    Parameters
    ----------
    name : str
        The model's name.
    features : int
        p, columns of X.
    lam : float
        λ ≥ 0.
    hidden : int, optional
        The MLP's width.
    activation : {"tanh", "relu"}, optional
        The MLP's activation.

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        For an unknown model, a bad width or activation, or λ < 0.
    """
    if name == "logistic":
        return LogisticModel(features, lam)
    if name == "linear":
        return LinearModel(features, lam)
    if name == "mlp":
        return MLPModel(features, lam, hidden, activation)
    raise ParameterError(f"the model must be logistic, linear or mlp, got {name!r}")


@dataclass(frozen=True)
class Baseline:
    """A non-private fit (reads the data without noise: never release it).

    Attributes
    ----------
    theta : numpy.ndarray, shape (d,)
        The parameters found.
    objective : float
        F(θ).
    gradient_norm : float
        ‖∇F(θ)‖₂ at the end.
    iterations : int
        Solver iterations.
    solver : str
        ``"newton"`` (logistic, certified), ``"lbfgs"``.
    """

    theta: np.ndarray
    objective: float
    gradient_norm: float
    iterations: int
    solver: str


def fit_baseline(model: Model, X: np.ndarray, y: np.ndarray, seed: int = 0) -> Baseline:
    """The non-private model: solved to tolerance (convex) or from a seeded start (MLP).

    Parameters
    ----------
    model : Model
        The model.
    X : numpy.ndarray, shape (n, p)
        Rows.
    y : numpy.ndarray, shape (n,)
        Labels.
    seed : int, optional
        The MLP's start (:meth:`MLPModel.init`).

    Returns
    -------
    Baseline

    Raises
    ------
    QueryError
        If there are no records.
    EngineError
        If the logistic solver cannot certify its tolerance (λ > 0 required there).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.shape[0] < 1:
        raise QueryError("no records to fit")
    if isinstance(model, LogisticModel) and model.lam > 0:
        fit = fit_logistic(X, y, model.lam)
        return Baseline(fit.theta, fit.objective, fit.gradient_norm, fit.iterations,
                        "newton")

    def fun(theta):
        return model.objective(theta, X, y), model.gradient(theta, X, y)

    convex = not isinstance(model, MLPModel)
    res = minimize(fun, model.init(seed), jac=True, method="L-BFGS-B",
                   options={"gtol": _BASELINE_GTOL if convex else 1e-8, "ftol": 0.0,
                            "maxiter": 10_000 if convex else _MLP_MAXITER})
    theta = np.asarray(res.x, dtype=np.float64)
    grad = model.gradient(theta, X, y)
    return Baseline(theta, model.objective(theta, X, y), float(np.linalg.norm(grad)),
                    int(res.nit), "lbfgs")
