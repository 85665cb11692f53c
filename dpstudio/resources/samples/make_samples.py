"""Generate DP Studio's bundled sample datasets (synthetic; no real person is in them).

Run from the repository root::

    python dpstudio/resources/samples/make_samples.py            # rewrites the files next to it
    python dpstudio/resources/samples/make_samples.py --out DIR  # writes them elsewhere

It writes, for each sample, ``<name>.csv`` and its schema sidecar ``<name>.csv.schema.json``.
The output is deterministic: a fixed seed, numpy's PCG64 generator, values rounded before
writing, and ``\\n`` line endings, so re-running it reproduces the committed files byte for
byte.

The sidecars declare each column's *public* domain the way a data steward would, from
domain knowledge (ages 18–100, a GPA between 0 and 4, the eight blood types), never from
the data's own minimum and maximum: in differential privacy those would leak the data.
A few survey incomes lie above the declared upper bound on purpose, as real data does;
DP mechanisms clip them to the declared bounds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from dpstudio.data.schema import ColumnSpec, ColumnType, Schema, save_schema, sidecar_path

SEED = 20240521
SURVEY_ROWS = 2_000
HEALTH_ROWS = 3_000
HERE = Path(__file__).resolve().parent

NUM, CAT, YES_NO, TEXT = (
    ColumnType.NUMERIC,
    ColumnType.CATEGORICAL,
    ColumnType.BOOLEAN,
    ColumnType.TEXT,
)

FACULTIES = ("Arts", "Business", "Engineering", "Law", "Medicine", "Science")
YEARS = ("1st", "2nd", "3rd", "4th", "Postgraduate")
SEXES = ("female", "male", "other")
REGIONS = ("North", "South", "East", "West", "Central")
SMOKER = ("never", "former", "current")
BLOOD_TYPES = ("O+", "O-", "A+", "A-", "B+", "B-", "AB+", "AB-")

SURVEY_SCHEMA = Schema(
    description=(
        "Synthetic anonymous student survey, answered online or on paper in class. "
        "cheated_on_exam is the sensitive attribute."
    ),
    columns=(
        ColumnSpec("respondent_id", TEXT, description="Pseudonymous respondent code (R0001…)"),
        ColumnSpec(
            "survey_mode",
            CAT,
            categories=("online", "classroom"),
            description="Where the questionnaire was answered",
        ),
        ColumnSpec("faculty", CAT, categories=FACULTIES, description="Faculty of enrolment"),
        ColumnSpec("year_of_study", CAT, categories=YEARS, description="Year of study"),
        ColumnSpec("age", NUM, lower=18, upper=100, description="Age in whole years"),
        ColumnSpec(
            "hours_studied_per_week",
            NUM,
            lower=0,
            upper=80,
            description="Self-reported hours of study per week outside class",
        ),
        ColumnSpec("works_part_time", YES_NO, description="Has a paid part-time job during term"),
        ColumnSpec(
            "income",
            NUM,
            lower=0,
            upper=100_000,
            description="Own annual income in euros (blank: declined to answer)",
        ),
        ColumnSpec(
            "gpa",
            NUM,
            lower=0,
            upper=4,
            description="Grade point average on a 0–4 scale (blank: not yet graded)",
        ),
        ColumnSpec(
            "cheated_on_exam",
            YES_NO,
            description="Sensitive: admits to having cheated on an exam this year",
        ),
    ),
)

HEALTH_SCHEMA = Schema(
    description=(
        "Synthetic primary-care records of adult patients. diabetes is the sensitive attribute."
    ),
    columns=(
        ColumnSpec("age", NUM, lower=18, upper=100, description="Age in whole years"),
        ColumnSpec("sex", CAT, categories=SEXES, description="Sex as recorded"),
        ColumnSpec("region", CAT, categories=REGIONS, description="Health region of residence"),
        ColumnSpec("smoker", CAT, categories=SMOKER, description="Smoking status"),
        ColumnSpec("blood_type", CAT, categories=BLOOD_TYPES, description="ABO and Rh type"),
        ColumnSpec(
            "bmi",
            NUM,
            lower=12,
            upper=60,
            description="Body-mass index in kg/m² (blank: not measured)",
        ),
        ColumnSpec(
            "systolic_bp", NUM, lower=70, upper=250, description="Systolic blood pressure, mmHg"
        ),
        ColumnSpec(
            "cholesterol",
            NUM,
            lower=100,
            upper=400,
            description="Total cholesterol in mg/dL (blank: not measured)",
        ),
        ColumnSpec(
            "visits_last_year",
            NUM,
            lower=0,
            upper=52,
            description="Visits to a doctor in the past twelve months",
        ),
        ColumnSpec(
            "diabetes", YES_NO, description="Sensitive: diagnosed with type 1 or type 2 diabetes"
        ),
    ),
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _yes_no(flags: np.ndarray) -> np.ndarray:
    return np.where(flags, "yes", "no")


def _with_missing(values: np.ndarray, rng: np.random.Generator, rate: float) -> pd.Series:
    """Integer-valued ``values`` with a fraction ``rate`` blanked (nullable ints print as 12)."""
    series = pd.Series(values)
    series[rng.random(len(values)) < rate] = np.nan
    return series


def make_survey(rng: np.random.Generator, n: int = SURVEY_ROWS) -> pd.DataFrame:
    """A student survey with a sensitive yes/no answer correlated with study habits."""
    mode = rng.choice(["online", "classroom"], size=n, p=[0.7, 0.3])
    faculty_i = rng.choice(len(FACULTIES), size=n, p=[0.18, 0.2, 0.17, 0.1, 0.12, 0.23])
    year_i = rng.choice(len(YEARS), size=n, p=[0.28, 0.25, 0.2, 0.15, 0.12])

    # Age: 18 on entry, one more per year of study, and a long tail of mature students.
    age = 18 + year_i + rng.poisson(0.6, n) + (rng.random(n) < 0.08) * rng.integers(3, 25, n)
    age = age + (year_i == 4) * rng.integers(1, 4, n)
    age = np.clip(age, 18, 70)

    # Study hours depend on the faculty and rise a little with the year.
    faculty_effect = np.array([-1.0, 0.0, 5.0, 4.0, 8.0, 3.0])[faculty_i]
    hours = rng.gamma(4.0, 3.6, n) + faculty_effect + 0.8 * year_i
    hours = np.clip(np.round(hours), 0, 80)

    works = rng.random(n) < _sigmoid(-0.6 + 0.12 * (age - 20) - 0.03 * (hours - 15))
    income = np.where(
        works,
        rng.lognormal(np.log(7_500), 0.55, n) * (1 + 0.04 * (age - 20)),
        (rng.random(n) < 0.3) * rng.lognormal(np.log(900), 0.8, n),
    )
    # A handful of students with a business on the side: above the declared bound.
    income = np.where(rng.random(n) < 0.002, rng.uniform(110_000, 180_000, n), income)
    income = _with_missing(np.round(income, -2), rng, 0.06).astype("Int64")

    gpa = 2.25 + 0.035 * hours + 0.08 * (year_i == 4) - 0.15 * works + rng.normal(0, 0.45, n)
    gpa = np.round(np.clip(gpa, 0.0, 4.0), 2)
    gpa = pd.Series(np.where(year_i == 0, np.where(rng.random(n) < 0.15, np.nan, gpa), gpa))

    logit = -1.45 - 0.07 * (hours - 15) + 0.45 * works - 0.25 * (mode == "classroom")
    logit = logit - 0.6 * (np.nan_to_num(gpa.to_numpy(), nan=3.0) - 3.0)
    cheated = rng.random(n) < _sigmoid(logit)

    return pd.DataFrame(
        {
            "respondent_id": [f"R{i:04d}" for i in range(1, n + 1)],
            "survey_mode": mode,
            "faculty": np.asarray(FACULTIES)[faculty_i],
            "year_of_study": np.asarray(YEARS)[year_i],
            "age": age.astype(np.int64),
            "hours_studied_per_week": hours.astype(np.int64),
            "works_part_time": _yes_no(works),
            "income": income,
            "gpa": gpa,
            "cheated_on_exam": _yes_no(cheated),
        }
    )


def make_health(rng: np.random.Generator, n: int = HEALTH_ROWS) -> pd.DataFrame:
    """Adult patients; blood pressure, cholesterol and diabetes rise with age and BMI."""
    age = np.round(18 + 72 * rng.beta(1.4, 1.7, n)).astype(np.int64)
    sex_i = rng.choice(len(SEXES), size=n, p=[0.508, 0.488, 0.004])
    male = sex_i == 1
    region_i = rng.choice(len(REGIONS), size=n, p=[0.18, 0.22, 0.2, 0.15, 0.25])
    smoker_i = np.where(
        rng.random(n) < _sigmoid(-1.9 + 0.035 * (age - 18)),
        1,  # former smokers are older
        rng.choice([0, 2], size=n, p=[0.75, 0.25]),
    )
    blood = rng.choice(
        BLOOD_TYPES, size=n, p=[0.374, 0.066, 0.357, 0.063, 0.085, 0.015, 0.034, 0.006]
    )

    region_effect = np.array([0.4, 1.2, -0.3, -0.8, 0.0])[region_i]
    bmi = np.exp(np.log(25.5) + 0.0025 * (age - 45) + rng.normal(0, 0.17, n)) + region_effect
    bmi = np.round(np.clip(bmi, 15.0, 55.0), 1)

    systolic = 100 + 0.5 * age + 0.9 * (bmi - 26) + 5 * (smoker_i == 2) + 4 * male
    systolic = np.clip(np.round(systolic + rng.normal(0, 12, n)), 85, 230).astype(np.int64)

    cholesterol = 165 + 0.65 * age + 1.3 * (bmi - 26) - 6 * male + rng.normal(0, 32, n)
    cholesterol = np.clip(np.round(cholesterol), 110, 360)
    # Cholesterol is measured less often in the young.
    unmeasured = rng.random(n) < np.where(age < 35, 0.18, 0.05)
    cholesterol = pd.Series(np.where(unmeasured, np.nan, cholesterol)).astype("Int64")

    diabetes = rng.random(n) < _sigmoid(-5.9 + 0.055 * age + 0.13 * (bmi - 26) + 0.3 * male)
    rate = np.exp(0.35 + 0.016 * age + 0.7 * diabetes + 0.25 * (sex_i == 0) + 0.3 * (bmi > 35))
    visits = np.clip(rng.poisson(rate), 0, 52).astype(np.int64)

    bmi_series = pd.Series(bmi)
    bmi_series[rng.random(n) < 0.02] = np.nan

    return pd.DataFrame(
        {
            "age": age,
            "sex": np.asarray(SEXES)[sex_i],
            "region": np.asarray(REGIONS)[region_i],
            "smoker": np.asarray(SMOKER)[smoker_i],
            "blood_type": blood,
            "bmi": bmi_series,
            "systolic_bp": systolic,
            "cholesterol": cholesterol,
            "visits_last_year": visits,
            "diabetes": _yes_no(diabetes),
        }
    )


def generate(seed: int = SEED) -> dict[str, tuple[pd.DataFrame, Schema]]:
    """Every sample as ``name -> (frame, schema)``; each sample has its own random stream."""
    survey_seq, health_seq = np.random.SeedSequence(seed).spawn(2)
    return {
        "survey": (make_survey(np.random.default_rng(survey_seq)), SURVEY_SCHEMA),
        "health": (make_health(np.random.default_rng(health_seq)), HEALTH_SCHEMA),
    }


def write(out_dir: Path = HERE, seed: int = SEED) -> list[Path]:
    """Write ``<name>.csv`` and ``<name>.csv.schema.json`` for each sample into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (frame, schema) in generate(seed).items():
        path = out_dir / f"{name}.csv"
        frame.to_csv(path, index=False, lineterminator="\n", encoding="utf-8")
        written += [path, save_schema(schema, sidecar_path(path))]
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: here)")
    args = parser.parse_args(argv)
    for path in write(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
