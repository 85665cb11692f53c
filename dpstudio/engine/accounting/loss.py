"""What a release drew, as data: the privacy-loss description a ledger keeps per release.

A ledger that stores only the (ε, δ) each release was charged can only add them up (basic
composition) or compose them as the worst (ε, δ) pairs. Tight accountants need what was
actually drawn — the noise family, its scale, the sensitivity, the sampling — because the
privacy loss of twenty Gaussians composes like one Gaussian, not like twenty (ε, δ) pairs.
A :class:`LossDescription` holds that, plus the (ε, δ) the release claimed (what basic
composition charges), and round-trips through JSON with a schema version so that a ledger
written today is read the same way later.

Families
--------
laplace             Lap(b) noise on each coordinate (ε = Δ·c/b, pure)
discrete_laplace    P(k) ∝ e^{−|k|/t} on each coordinate of an integer query
gaussian            N(0, σ²) noise on each coordinate
discrete_gaussian   N_Z(0, σ²) on each coordinate of an integer query
randomized_response K-ary randomized response at ε (``k`` values)
pair                a finite-output mechanism's worst-case pair of output laws (P, Q),
                    kept compact as its distinct privacy losses ``losses`` = ln(p/q) with
                    their masses ``p`` under P and ``q`` under Q (schema version 2). The
                    pld accountant composes the pair itself, both ways; it is pure
                    ε-DP with ε = max|loss|, so zCDP takes ρ = ε²/2 (Bun & Steinke
                    2016, Prop. 3.3) and advanced composition its claimed ε
subsampled_gaussian DP-SGD: ``steps`` Gaussian steps of σ on Poisson samples of rate q,
                    add/remove neighbours
pure                only ε is known (δ = 0)
approx              only (ε, δ) is known, δ > 0
composed            a list of descriptions released together

For the four additive families, ``coordinates`` (c, default 1) coordinates may change
between neighbours, each by at most ``sensitivity`` (Δ): ℓ₁ sensitivity Δc, ℓ₂ Δ√c. This
is how the engine's :class:`~dpstudio.engine.additive.IntegerNoise` states it (c = 2 for a
histogram under replace-one), and it makes the exact privacy loss the c-fold composition
of one coordinate's (see :meth:`LossDescription.from_integer_noise`).

The claimed (ε, δ) is checked against the noise where that is a closed form (Laplace,
discrete Laplace, randomized response, Gaussian, a pair's largest |loss|): a description
whose claim understates its own noise's privacy loss is refused, so basic composition
never undercharges it.

Schema versions
---------------
Version 1 holds every family but ``pair``; version 2 added ``pair``. :meth:`to_dict`
writes the lowest version that holds the description (1 unless a ``pair`` is in it), so
a ledger without local pairs stays readable by a DP Studio that reads only version 1;
:meth:`LossDescription.from_dict` reads both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstudio.engine.calibration import analytic_gaussian_delta, discrete_gaussian_delta
from dpstudio.engine.checks import count, non_negative, number, positive
from dpstudio.engine.checks import sample_rate as sample_rate_checked
from dpstudio.engine.errors import ParameterError

__all__ = ["FAMILIES", "SCHEMA_VERSION", "LossDescription"]

SCHEMA_VERSION = 2
FAMILIES = ("laplace", "discrete_laplace", "gaussian", "discrete_gaussian",
            "randomized_response", "subsampled_gaussian", "pair", "pure", "approx",
            "composed")
# The oldest schema version that holds each family (``pair`` came with version 2).
_SINCE = {"pair": 2}
# A pair's stored losses must equal ln(p/q) of its stored masses to this (absolute).
_PAIR_LOSS_TOLERANCE = 1e-9
# Most classes a stored pair may have: a description is a few numbers, not an output table.
_PAIR_MAX_CLASSES = 4096
# Which fields each family carries besides mechanism, epsilon and delta (the claim).
_FIELDS: dict[str, tuple[str, ...]] = {
    "laplace": ("scale", "sensitivity", "norm", "coordinates"),
    "discrete_laplace": ("scale", "sensitivity", "norm", "coordinates"),
    "gaussian": ("scale", "sensitivity", "norm", "coordinates"),
    "discrete_gaussian": ("scale", "sensitivity", "norm", "coordinates"),
    "randomized_response": ("k",),
    "pair": ("losses", "p", "q"),
    "subsampled_gaussian": ("scale", "sensitivity", "norm", "sample_rate", "steps"),
    "pure": (),
    "approx": (),
    "composed": ("parts",),
}
_NORM = {"laplace": "l1", "discrete_laplace": "l1", "gaussian": "l2",
         "discrete_gaussian": "l2", "subsampled_gaussian": "l2"}
_KEYS = ("schema_version", "mechanism", "epsilon", "delta", "scale", "sensitivity", "norm",
         "coordinates", "k", "sample_rate", "steps", "losses", "p", "q", "parts")
# A claim may sit below the exact ε of its noise by this relative amount (calibrations
# bisect to ~1e-12); anything more is a claim the noise does not honour.
_CLAIM_SLACK = 1e-9
# The discrete Gaussian's claim is checked by its exact δ (O(σ) work) up to this σ.
_DG_CHECK_MAX_SIGMA = 1e5


@functools.lru_cache(maxsize=256)
def _discrete_gaussian_delta(sigma: float, sens: int, eps: float, coordinates: int) -> float:
    # O(σ) work, and a ledger re-reads every stored description at every release.
    return discrete_gaussian_delta(sigma, sens, eps, coordinates)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return count(name, value)


@dataclass(frozen=True)
class LossDescription:
    """The privacy loss one release drew: noise family, scale, sensitivity, sampling, and
    the (ε, δ) it claimed (and was charged under basic composition).

    Build with the constructor (checked) or :meth:`from_dict`; :meth:`to_dict` gives the
    JSON form, with ``schema_version`` and only the fields of the family.

    Parameters
    ----------
    mechanism : str
        One of :data:`FAMILIES`.
    epsilon : float
        ε claimed, ≥ 0 (for "composed", the claims of the parts are used instead and this
        is their sum if left at 0).
    delta : float, optional
        δ claimed, in [0, 1).
    scale : float, optional
        Noise scale: b (Laplace), t (discrete Laplace), σ (Gaussian families, in the
        query's units; for subsampled_gaussian the noise std, sensitivity separate).
    sensitivity : float, optional
        Δ, the most one changing coordinate moves (an integer, in grid steps, for the
        discrete families); for subsampled_gaussian the ℓ₂ clipping norm.
    norm : {"l1", "l2"}, optional
        The norm the family's noise is calibrated to (ℓ₁ for the Laplace families, ℓ₂
        for the Gaussian ones); must match the family (filled in when omitted).
    coordinates : int, optional
        Additive families: how many coordinates may change between neighbours, each by
        at most Δ (default 1; 2 for a histogram under replace-one).
    k : int, optional
        Number of values of randomized response, ≥ 2.
    sample_rate : float, optional
        Poisson sampling rate q in (0, 1] (subsampled_gaussian).
    steps : int, optional
        Number of steps ≥ 1 (subsampled_gaussian).
    losses, p, q : tuple of float, optional
        A ``pair``: its distinct privacy losses ln(p/q), strictly increasing, and the
        masses of each under the two neighbouring inputs' output laws P and Q (each > 0,
        each summing to 1). The pair is accounted both ways, (P, Q) and (Q, P).
    parts : tuple of LossDescription, optional
        The releases of a "composed" description.

    Raises
    ------
    ParameterError
        In one sentence, for a field missing, out of range, foreign to the family, or a
        claim below what the noise gives.
    """

    mechanism: str
    epsilon: float = 0.0
    delta: float = 0.0
    scale: float | None = None
    sensitivity: float | None = None
    norm: str | None = None
    coordinates: int | None = None
    k: int | None = None
    sample_rate: float | None = None
    steps: int | None = None
    losses: tuple[float, ...] | None = None
    p: tuple[float, ...] | None = None
    q: tuple[float, ...] | None = None
    parts: tuple[LossDescription, ...] | None = None

    def __post_init__(self) -> None:
        fam = self.mechanism
        if fam not in FAMILIES:
            raise ParameterError(f"unknown mechanism family {fam!r}; expected one of "
                                 f"{', '.join(FAMILIES)}")
        allowed = _FIELDS[fam]
        for name in ("scale", "sensitivity", "norm", "coordinates", "k", "sample_rate",
                     "steps", "losses", "p", "q", "parts"):
            if name not in allowed and getattr(self, name) is not None:
                raise ParameterError(f"a {fam} description has no field {name!r}")
        set_ = object.__setattr__
        set_(self, "delta", number("δ", self.delta, low=0.0, high=1.0, high_open=True))
        if fam == "composed":
            set_(self, "epsilon", non_negative("ε", self.epsilon))
            self._check_parts()
            return
        set_(self, "epsilon", non_negative("ε", self.epsilon))
        if fam in _NORM:
            self._check_noise()
        elif fam == "randomized_response":
            if self.k is None:
                raise ParameterError("a randomized_response description needs k, the "
                                     "number of values")
            set_(self, "k", _integer("k", self.k))
            if self.k < 2:
                raise ParameterError(f"randomized response needs k ≥ 2 values, got {self.k}")
            positive("ε", self.epsilon)
            if self.delta != 0:
                raise ParameterError("randomized response is pure ε-DP: its δ must be 0")
        elif fam == "pair":
            self._check_pair()
        elif fam == "pure" and self.delta != 0:
            raise ParameterError("a pure description has δ = 0; use 'approx' for δ > 0")
        elif fam == "approx" and self.delta == 0:
            raise ParameterError("an approx description needs δ > 0; use 'pure' for δ = 0")

    # ----------------------------------------------------------------- checks

    def _check_parts(self) -> None:
        parts = self.parts
        if not parts or isinstance(parts, str | bytes | Mapping):
            raise ParameterError("a composed description needs a nonempty list of parts")
        parts = tuple(parts)
        if not all(isinstance(p, LossDescription) for p in parts):
            raise ParameterError("the parts of a composed description must be "
                                 "LossDescriptions")
        object.__setattr__(self, "parts", parts)
        eps = math.fsum(p.epsilon for p in parts)
        dlt = math.fsum(p.delta for p in parts)
        if self.epsilon == 0 and self.delta == 0:
            object.__setattr__(self, "epsilon", eps)
            object.__setattr__(self, "delta", min(dlt, math.nextafter(1.0, 0.0)))

    def _check_pair(self) -> None:
        arrays = []
        for name in ("losses", "p", "q"):
            raw = getattr(self, name)
            if raw is None or isinstance(raw, str | bytes | Mapping):
                raise ParameterError(f"a pair description needs {name}, a list of numbers")
            try:
                a = np.asarray([float(v) for v in raw], dtype=np.float64)
            except (TypeError, ValueError):
                raise ParameterError(f"the {name} of a pair description must be numbers"
                                     ) from None
            arrays.append(a)
        losses, p, q = arrays
        if not losses.size == p.size == q.size > 0:
            raise ParameterError("a pair description needs losses, p and q of one "
                                 "non-zero length")
        if losses.size > _PAIR_MAX_CLASSES:
            raise ParameterError(f"a pair description holds at most {_PAIR_MAX_CLASSES} "
                                 f"privacy-loss classes, got {losses.size}")
        for name, a in (("p", p), ("q", q)):
            if not np.all(np.isfinite(a)) or np.any(a <= 0) or abs(float(np.sum(a)) - 1) > 1e-9:
                raise ParameterError(f"the {name} of a pair description must be positive "
                                     f"masses summing to 1")
        if not np.all(np.isfinite(losses)) or np.any(np.diff(losses) <= 0):
            raise ParameterError("the losses of a pair description must be finite and "
                                 "strictly increasing")
        if np.max(np.abs(np.log(p) - np.log(q) - losses)) > _PAIR_LOSS_TOLERANCE:
            raise ParameterError("the losses of a pair description must be ln(p/q) of its "
                                 "masses")
        if self.delta != 0:
            raise ParameterError("a pair of finite losses is pure ε-DP: its δ must be 0")
        set_ = object.__setattr__
        for name, a in (("losses", losses), ("p", p), ("q", q)):
            set_(self, name, tuple(float(v) for v in a))
        exact = float(np.max(np.abs(losses)))
        if self.epsilon < exact * (1 - _CLAIM_SLACK):
            raise ParameterError(f"this pair claims ε = {self.epsilon:g} but its largest "
                                 f"privacy loss is {exact:g}")

    def _check_noise(self) -> None:
        fam = self.mechanism
        set_ = object.__setattr__
        for name in ("scale", "sensitivity"):
            if getattr(self, name) is None:
                raise ParameterError(f"a {fam} description needs {name}")
        set_(self, "scale", positive("scale", self.scale))
        set_(self, "sensitivity", positive("sensitivity", self.sensitivity))
        want = _NORM[fam]
        if self.norm is None:
            set_(self, "norm", want)
        elif self.norm != want:
            raise ParameterError(f"a {fam} release's sensitivity is {want.upper()}, "
                                 f"not {self.norm!r}")
        if fam in ("discrete_laplace", "discrete_gaussian"):
            if float(self.sensitivity) != int(self.sensitivity):
                raise ParameterError(f"a {fam} release needs an integer sensitivity, got "
                                     f"{self.sensitivity!r}")
        if fam != "subsampled_gaussian":
            c = 1 if self.coordinates is None else _integer("coordinates", self.coordinates)
            set_(self, "coordinates", c)
        if fam == "subsampled_gaussian":
            if self.sample_rate is None or self.steps is None:
                raise ParameterError("a subsampled_gaussian description needs sample_rate "
                                     "and steps")
            set_(self, "sample_rate", sample_rate_checked(self.sample_rate))
            set_(self, "steps", _integer("steps", self.steps))
        self._check_claim()

    def _check_claim(self) -> None:
        fam = self.mechanism
        if fam in ("laplace", "discrete_laplace"):
            exact = self.pure_epsilon
            if self.epsilon < exact * (1 - _CLAIM_SLACK):
                raise ParameterError(
                    f"this {fam} release claims ε = {self.epsilon:g} but its noise gives "
                    f"ε = Δ·coordinates/scale = {exact:g}")
            return
        if self.delta == 0:  # the Gaussian families are never pure
            raise ParameterError(f"a {fam} release claims δ > 0")
        got = None
        if fam == "gaussian":
            got = analytic_gaussian_delta(self.scale, self.sensitivity
                                          * math.sqrt(self.coordinates), self.epsilon)
        elif (fam == "discrete_gaussian" and self.coordinates <= 2
              and self.scale <= _DG_CHECK_MAX_SIGMA):
            got = _discrete_gaussian_delta(self.scale, int(self.sensitivity), self.epsilon,
                                           self.coordinates)
        if got is not None and got > self.delta * (1 + _CLAIM_SLACK):
            raise ParameterError(
                f"this {fam} release claims (ε, δ) = ({self.epsilon:g}, {self.delta:g}) "
                f"but its noise gives δ = {got:.3g} at that ε")

    # ----------------------------------------------------------------- reading

    @property
    def pure_epsilon(self) -> float | None:
        """The ε of a pure-DP release from its noise (Δ·coordinates/scale for the Laplace
        families; RR's ε; a pair's largest |loss|; the claim of a "pure" one); None
        otherwise.

        Returns
        -------
        float or None
        """
        if self.mechanism in ("laplace", "discrete_laplace"):
            return self.sensitivity * self.coordinates / self.scale
        if self.mechanism == "pair":
            return max(abs(self.losses[0]), abs(self.losses[-1]))
        if self.mechanism == "randomized_response" or (
                self.mechanism == "pure"):
            return self.epsilon
        return None

    def leaves(self) -> list[LossDescription]:
        """The releases this description holds, "composed" ones flattened.

        Returns
        -------
        list of LossDescription
        """
        if self.mechanism != "composed":
            return [self]
        out: list[LossDescription] = []
        for p in self.parts:
            out.extend(p.leaves())
        return out

    @classmethod
    def from_integer_noise(cls, noise: Any) -> LossDescription:
        """The description of a release drawn with the engine's integer noise.

        Parameters
        ----------
        noise : IntegerNoise
            As calibrated by :class:`~dpstudio.engine.additive.NoiseFamily` (read by its
            attributes ``family``, ``scale``, ``sensitivity``, ``coordinates``,
            ``epsilon``, ``delta``, all in grid steps): Laplace noise on a grid is the
            discrete Laplace in grid units, Gaussian noise the discrete Gaussian.

        Returns
        -------
        LossDescription
        """
        families = {"laplace": "discrete_laplace", "gaussian": "discrete_gaussian"}
        fam = getattr(noise, "family", None)
        if fam not in families:
            raise ParameterError(f"integer noise of family {fam!r} has no loss description")
        return cls(families[fam], epsilon=noise.epsilon, delta=noise.delta,
                   scale=noise.scale, sensitivity=int(noise.sensitivity),
                   coordinates=int(noise.coordinates))

    @classmethod
    def from_pair(cls, pair: Any, epsilon: float | None = None) -> LossDescription:
        """The ``pair`` description of a finite-output mechanism's worst-case pair.

        Parameters
        ----------
        pair : LossPair
            As :mod:`~dpstudio.engine.tradeoff.pairs` gives it (classes ordered by
            ln(q/p); read by its ``p``, ``q`` and ``loss`` arrays). Classes of zero mass
            under both laws are dropped; every other class needs mass under both (a
            finite loss).
        epsilon : float, optional
            The ε claimed (default: the pair's largest |loss|).

        Returns
        -------
        LossDescription

        Raises
        ------
        ParameterError
            For a pair with an infinite loss, or a claim below its largest |loss|.
        """
        p, q = np.asarray(pair.p, dtype=np.float64), np.asarray(pair.q, dtype=np.float64)
        live = (p > 0) | (q > 0)
        p, q = p[live], q[live]
        if np.any(p == 0) or np.any(q == 0):
            raise ParameterError("a pair with an infinite privacy loss has no pure "
                                 "description; describe it by its (ε, δ)")
        # The stored loss is ln(p/q) (the PLD's orientation), recomputed from the masses
        # so that it is exactly what they give; the pair's own order is by ln(q/p).
        order = np.argsort(np.log(p) - np.log(q), kind="stable")
        p, q = p[order] / p.sum(), q[order] / q.sum()
        losses = np.log(p) - np.log(q)
        exact = float(np.max(np.abs(losses)))
        claim = exact if epsilon is None else max(float(epsilon), exact)
        return cls("pair", epsilon=claim, losses=tuple(losses.tolist()),
                   p=tuple(p.tolist()), q=tuple(q.tolist()))

    # ----------------------------------------------------------------- JSON

    def schema_version(self) -> int:
        """The lowest schema version that holds this description (2 with a ``pair``).

        Returns
        -------
        int
        """
        return max(_SINCE.get(d.mechanism, 1) for d in self.leaves())

    def to_dict(self) -> dict:
        """The JSON form: ``schema_version``, ``mechanism``, ``epsilon``, ``delta`` and the
        family's fields (parts as nested dicts).

        Returns
        -------
        dict
        """
        out: dict[str, Any] = {"schema_version": self.schema_version(),
                               "mechanism": self.mechanism,
                               "epsilon": self.epsilon, "delta": self.delta}
        for name in _FIELDS[self.mechanism]:
            value = getattr(self, name)
            if name == "parts":
                out[name] = [p.to_dict() for p in value]
            elif name in ("losses", "p", "q"):
                out[name] = list(value)
            elif value is not None:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LossDescription:
        """Read the JSON form written by :meth:`to_dict`.

        Parameters
        ----------
        data : mapping
            As from ``json.loads``.

        Returns
        -------
        LossDescription

        Raises
        ------
        ParameterError
            For a newer schema version, an unknown field, or a bad value (one sentence).
        """
        if not isinstance(data, Mapping):
            raise ParameterError(f"a loss description must be a JSON object, got "
                                 f"{type(data).__name__}")
        version = data.get("schema_version", SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ParameterError(f"a loss description's schema_version must be an "
                                 f"integer ≥ 1, got {version!r}")
        if version > SCHEMA_VERSION:
            raise ParameterError(f"this loss description has schema_version {version}, "
                                 f"newer than the {SCHEMA_VERSION} this DP Studio reads; "
                                 f"upgrade DP Studio to account it")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ParameterError(f"a loss description has unknown field(s) "
                                 f"{', '.join(map(repr, unknown))}; it was written by "
                                 f"another version of DP Studio")
        if "mechanism" not in data:
            raise ParameterError("a loss description needs its mechanism")
        kwargs = {k: v for k, v in data.items() if k != "schema_version"}
        if version < 2 and any(_SINCE.get(str(m), 1) > version
                               for m in _mechanisms(data)):
            raise ParameterError(f"a loss description of schema_version {version} cannot "
                                 f"hold a pair; it was edited outside DP Studio")
        if "parts" in kwargs:
            raw = kwargs["parts"]
            if not isinstance(raw, list | tuple):
                raise ParameterError("the parts of a composed description must be a list")
            kwargs["parts"] = tuple(cls.from_dict(p) for p in raw)
        return cls(**kwargs)


def _mechanisms(data: Mapping[str, Any]) -> list[Any]:
    """The mechanism names in a stored description, parts included (unchecked)."""
    out = [data.get("mechanism")]
    parts = data.get("parts")
    if isinstance(parts, list | tuple):
        for part in parts:
            if isinstance(part, Mapping):
                out.extend(_mechanisms(part))
    return out
