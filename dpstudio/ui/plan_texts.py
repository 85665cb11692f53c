"""The release plan's words: one-sentence tooltips and the reasons a column is greyed."""

from __future__ import annotations

from typing import Any

from dpstudio.data.schema import ColumnType, Source

__all__ = ["COLUMN_TIPS", "SETTING_TIPS", "column_problem", "key_problem", "plan_queries"]

#: Tooltips of the plan table's headers (and cells).
COLUMN_TIPS = {
    "Column": "The value column of the statistic, with its bounds or categories as declared "
              "in the schema.",
    "Query": "The statistic released: a count, sum, mean or histogram.",
    "By": "Group by a categorical column: one noisy value per declared key, every key "
          "released (an absent key with noise), an undeclared one never.",
    "weight": "Weight: this statistic's part of the plan's ε (and δ): εᵢ = ε·wᵢ/Σw.",
    "target": "Target: the interval half-width you want for this statistic at the plan's "
              "confidence; the ε it needs is computed from the noise alone.",
    "ε share": "ε share: the part of the plan's total ε this statistic's noise is "
               "calibrated to.",
    "δ share": "δ share: the part of the plan's δ this statistic spends (0 for pure-ε "
               "mechanisms such as Laplace).",
    "Expected error": "Expected error: the half-width of the interval the noise stays "
                      "within at the plan's confidence (per cell for a histogram or a "
                      "grouped statistic).",
    "Note": "What the expected error assumes.",
}

#: Tooltips of the settings above the table.
SETTING_TIPS = {
    "epsilon": "Total ε: the privacy budget the whole plan spends, charged once to the "
               "project's ledger.",
    "delta": "Total δ: the chance the ε guarantee fails, shared among the statistics whose "
             "mechanism takes one (Gaussian).",
    "method": "Split: by weights (each statistic gets its weight's part of ε) or by accuracy "
              "targets (each gets the ε its target needs; their sum must fit the total).",
    "confidence": "Confidence: the probability with which each statistic's error stays "
                  "within its expected error (and its target).",
    "mechanism": "Mechanism: the noise every statistic of the plan adds (Laplace: pure ε; "
                 "Gaussian: spends δ).",
    "rows": "Public rows: a number of rows you may publish (never read off the data); a "
            "mean's planned error and target need it.",
    "by": "Group by: a categorical column with declared keys; one noisy value per key.",
}

_PLAN_QUERIES = {
    ColumnType.NUMERIC: ("count", "sum", "mean", "histogram"),
    ColumnType.CATEGORICAL: ("count", "histogram"),
    ColumnType.BOOLEAN: ("count", "histogram"),
}


def plan_queries(spec: Any) -> tuple[str, ...]:
    """The plan's queries for a declared column (none for other kinds)."""
    return _PLAN_QUERIES.get(spec.type, ())


def column_problem(schema: Any, name: str) -> str | None:
    """Why column ``name`` cannot be a plan's statistic, in one line; None if it can.

    Only what the schema declares counts: a guessed type, or numeric bounds or categories
    not yet declared, grey the column out.
    """
    spec = schema.get(name) if schema is not None else None
    if spec is None:
        return "not in the schema"
    if spec.type is ColumnType.TEXT:
        return "free text: a plan releases counts, sums, means and histograms"
    if spec.type is ColumnType.IDENTIFIER:
        return "an identifier column is not released as a statistic"
    if schema.source(name) is Source.GUESSED:
        return "type guessed, not declared: declare it in the Columns panel"
    if spec.type is ColumnType.NUMERIC and spec.bounds is None:
        return "bounds not declared: declare them in the Columns panel"
    if spec.type is ColumnType.CATEGORICAL and not spec.categories:
        return "categories not declared: declare them in the Columns panel"
    return None


def key_problem(schema: Any, name: str) -> str | None:
    """Why column ``name`` cannot group a plan's statistic (keys must be declared)."""
    spec = schema.get(name) if schema is not None else None
    if spec is None or spec.type not in (ColumnType.CATEGORICAL, ColumnType.BOOLEAN):
        return "not a categorical column"
    if schema.source(name) is Source.GUESSED:
        return "keys guessed, not declared: declare them in the Columns panel"
    if not spec.categories:
        return "keys not declared: declare its categories in the Columns panel"
    return None
