"""``dpstudio train``: train a model privately on a held-out split and say what it cost."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from dpstudio.commands._common import EXIT_OK, CliError, Parser

__all__ = ["parser", "run"]

#: Said in every output: a training run is never recorded in a project's ledger.
LEDGER_NOTE = ("not charged to any ledger: dpstudio train records nothing (a model release "
               "through a project comes later)")

_FEDERATED = ("sites_by", "sites", "imbalance", "fed_variant", "rounds", "local_steps",
              "fraction", "fed_noise", "colluding", "dropouts")
_DPSGD = ("epochs", "batch_rate", "clip", "learning_rate", "expected_batch")


def parser() -> argparse.ArgumentParser:
    from dpstudio.analysis.training import METHODS, MODELS

    p = Parser(
        prog="dpstudio train",
        description="Train logistic or linear (ridge) regression or a one-hidden-layer MLP "
        "without privacy, by output or objective perturbation, or with DP-SGD; measure it "
        "on held-out rows against the non-private model, and optionally audit it with a "
        "membership-inference attack.",
        epilog="Features and a regression label need declarations in DATA.schema.json "
        "(bounds for numbers, categories for categories); they are never read off the data.",
    )
    p.add_argument("data", help="CSV, TSV, Parquet or Excel file, or sample:NAME for a "
                   "bundled sample (sample:survey, sample:health)")
    p.add_argument("--no-header", dest="header", action="store_false",
                   help="the file's first line is data, not column names")
    p.add_argument("--label", required=True,
                   help="the label column (yes/no for logistic and mlp, a number with "
                   "declared bounds for linear)")
    p.add_argument("--features", required=True, help="the feature columns, a,b,c")
    p.add_argument("--model", choices=MODELS, default="logistic")
    p.add_argument("--method", choices=METHODS, default="output")
    p.add_argument("--epsilon", type=float, help="ε (required unless --method nonprivate)")
    p.add_argument("--delta", type=float, default=0.0,
                   help="δ (default 0: pure ε for output and objective perturbation; "
                   "DP-SGD needs δ > 0)")
    p.add_argument("--lambda", dest="lam", type=float, metavar="L",
                   help="regularization strength λ (default: the method's)")
    p.add_argument("--epochs", type=float, help="DP-SGD: passes over the data")
    p.add_argument("--batch-rate", type=float, metavar="Q",
                   help="DP-SGD: Poisson sampling rate q")
    p.add_argument("--clip", type=float, metavar="C", help="DP-SGD: clipping norm C")
    p.add_argument("--learning-rate", type=float, metavar="ETA", help="DP-SGD: step size η")
    p.add_argument("--expected-batch", type=float, metavar="B",
                   help="DP-SGD: the public expected batch B each noisy gradient sum is "
                   "divided by (per site for FedAvg; e.g. q × a public row count), required "
                   "for a release, q·n read from the data in a simulation when left out")
    p.add_argument("--hidden", type=int, metavar="H", help="mlp: hidden width (default 16)")
    p.add_argument("--test-fraction", type=float, default=0.25,
                   help="share of the rows held out for the metrics (default 0.25)")
    p.add_argument("--split-seed", type=int, default=0,
                   help="seed of the held-out split (default 0)")
    fed = p.add_argument_group("federated training")
    fed.add_argument("--sites-by", metavar="COL", help="one site per value of this column")
    fed.add_argument("--sites", type=int, metavar="S", help="a random split into S sites")
    fed.add_argument("--imbalance", type=float, metavar="A",
                     help="label skew of the random split (Dirichlet α)")
    fed.add_argument("--fed-variant", choices=("none", "local", "secagg", "cape", "shuffle"))
    fed.add_argument("--rounds", type=int, metavar="R", help="FedAvg rounds")
    fed.add_argument("--local-steps", type=int, metavar="E", help="local steps per round")
    fed.add_argument("--fraction", type=float, metavar="F",
                     help="share of the sites joining each round (δ credited, not ε)")
    fed.add_argument("--fed-noise", choices=("gaussian", "skellam"),
                     help="secagg: the sites' noise shares (default gaussian)")
    fed.add_argument("--colluding", type=int, metavar="C",
                     help="secagg, cape: sites per round that may collude with the server")
    fed.add_argument("--dropouts", type=int, metavar="U",
                     help="secagg: sites per round that may drop out")
    fed.add_argument("--sites-alone", action="store_true",
                     help="also train each site alone at the same ε on its own rows (with "
                     "--simulate): the value of collaborating")
    p.add_argument("--audit", type=int, default=0, metavar="N",
                   help="membership audit: N trainings on each of two neighbouring datasets "
                   "(≥ 4)")
    p.add_argument("--runs", type=int, default=1, metavar="R",
                   help="repeat the training R times (with --simulate) and report each "
                   "metric's spread (mean, sd, min, max)")
    p.add_argument("--simulate", type=int, metavar="SEED",
                   help="draw all noise from a seeded generator: a simulation, NOT a release")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    return _run(args)


def _params(args: argparse.Namespace) -> dict[str, Any]:
    """The method's entry parameters given on the command line (refused where foreign)."""
    given = [f"--{k.replace('_', '-')}" for k in _DPSGD if getattr(args, k) is not None]
    if given and args.method != "dpsgd":
        raise CliError(f"{', '.join(given)} set DP-SGD's steps: use --method dpsgd")
    if args.hidden is not None and args.model != "mlp":
        raise CliError("--hidden sets the MLP's width: use --model mlp")
    params = {k: getattr(args, k) for k in _DPSGD if getattr(args, k) is not None}
    if args.lam is not None:
        params["lambda"] = args.lam
    return params


def _federated(args: argparse.Namespace) -> dict[str, Any] | None:
    """The federated options given (None: centralized training)."""
    if args.sites_by is None and args.sites is None:
        given = [f"--{k.replace('_', '-')}" for k in _FEDERATED
                 if getattr(args, k) not in (None, "none")]
        if given:
            raise CliError(f"{', '.join(given)} set federated training: give its sites "
                           "with --sites-by COL or --sites S")
        return None
    try:
        import dpstudio.engine.learning.federated  # noqa: F401
    except ImportError:
        raise CliError("federated training is not built yet") from None
    return {"sites_by": args.sites_by, "sites": args.sites, "imbalance": args.imbalance,
            "rounds": args.rounds, "local_steps": args.local_steps,
            "fraction": args.fraction, "fed_noise": args.fed_noise,
            "colluding": args.colluding, "dropouts": args.dropouts}


def _read(args: argparse.Namespace, analysis: Any) -> Any:
    """The label and feature columns, as the engine takes them (see
    :func:`dpstudio.execution.training_input.training_columns`)."""
    from dpstudio.data.loading import load_table
    from dpstudio.execution.training_input import training_column_names, training_columns

    frame = load_table(args.data, header=args.header,
                       columns=training_column_names(analysis))
    return training_columns(frame, analysis)


def _run(args: argparse.Namespace) -> int:
    from dpstudio.analysis import run as run_analysis
    from dpstudio.analysis.training import describe_training, resolve_training
    from dpstudio.data.samples import data_argument
    from dpstudio.data.schema import schema_for
    from dpstudio.engine.rng import SecureSource, SimulationSource

    federated = _federated(args)
    variant = args.fed_variant or "none"
    if federated is not None and args.fed_variant is None and args.method != "nonprivate":
        raise CliError("choose how the sites are protected: --fed-variant local, secagg, "
                       "cape or shuffle")
    if args.method != "nonprivate" and args.epsilon is None:
        raise CliError(f"--method {args.method} needs --epsilon E")
    if args.method == "nonprivate" and args.epsilon is not None:
        raise CliError("--method nonprivate trains without privacy: drop --epsilon")
    features = tuple(f.strip() for f in args.features.split(",") if f.strip())
    analysis = describe_training(
        args.label, features, args.model, args.method, args.epsilon, delta=args.delta,
        params=_params(args), hidden=args.hidden or 16, test_fraction=args.test_fraction,
        split_seed=args.split_seed, audit=args.audit, fed_variant=variant,
        federated=federated, runs=args.runs, sites_alone=args.sites_alone)
    args.data = data_argument(args.data)  # sample:NAME → the bundled file, sidecar beside it
    analysis, notes = resolve_training(analysis, schema_for(args.data))
    source = SimulationSource(args.simulate) if args.simulate is not None else SecureSource()
    result = run_analysis(analysis, _read(args, analysis), source, notes=notes)
    out = result.to_dict()
    out["charged"] = False
    out["ledger"] = LEDGER_NOTE
    if args.json:
        print(json.dumps(out, indent=2, allow_nan=False, default=_json_default))
    else:
        _print(out)
    return EXIT_OK


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _fmt(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, float) and math.isfinite(x) else str(x)


def _print(out: dict[str, Any]) -> None:
    kind = ("non-private baseline (no guarantee)" if out["method"] == "nonprivate" else
            "SIMULATION (seeded generator, not a release)" if out["simulated"] else "release")
    print(f"{out['model']} model of {out['label']!r} on {', '.join(out['features'])}, "
          f"{out['method']} — {kind}")
    for key in ("accuracy", "auc", "rmse"):
        if key in out:
            print(f"  {key:<12} {_fmt(out[key])}   (non-private {_fmt(out['baseline'][key])})")
    if out["epsilon"] is not None:
        print(f"  guarantee    ε = {out['epsilon']:.6g}, δ = {out['delta']:g} "
              f"({out['accountant']}, {out['relation']})")
    split = out["split"]
    print(f"  split        {split['train']} rows trained on, {split['test']} held out "
          f"(seed {split['seed']})")
    if out["rounds"]:
        print(f"  federated    {out['fed_variant']}: {len(out['rounds'])} rounds, held-out "
              f"metric {_fmt(out['rounds'][0])} → {_fmt(out['rounds'][-1])}")
        print(f"  trusts       {out['trusts']}")
    for key, sp in out.get("spread", {}).items():
        print(f"  {key:<12} {_fmt(sp['mean'])} ± {_fmt(sp['sd'])} over {sp['runs']} runs "
              f"(min {_fmt(sp['min'])}, max {_fmt(sp['max'])})")
    for site in out.get("sites_alone", []):
        figures = ", ".join(f"{k} {_fmt(site[k])}" for k in ("accuracy", "auc", "rmse")
                            if k in site) or site.get("note", "")
        print(f"  alone        {site['site']} ({site['rows']} rows): {figures}")
    for row in out.get("coefficients", []):
        print(f"  {row['feature']:<24} {row['coefficient']:>12.6g}")
    if "audit" in out:
        au = out["audit"]
        print(f"  audit        ε ≥ {au['epsilon_lower']:.3g} with {au['confidence']:.0%} "
              f"confidence ({au['runs']} trainings per dataset, {au['relation']} relation)")
    for note in out.get("notes", []):
        print(f"  note: {note}")
    print(f"  ledger       {LEDGER_NOTE}")
    sys.stdout.flush()
