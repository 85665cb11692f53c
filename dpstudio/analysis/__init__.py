"""The analysis layer: an analysis described once, resolved against the declared schema,
dispatched once to the engine, with one result shape and one capability table.

Between the engine and its clients (the CLI, projects and their exports, the application).
It imports the engine and numpy only: no Qt, no pandas, no data, project, export or UI
module (import-linter keeps it so).

* :class:`AnalysisSpec` — what a user describes (:mod:`.request`);
* :func:`resolve` — completed from the declared schema and checked (:mod:`.resolve`);
* :func:`run` — dispatched to the engine (:mod:`.dispatch`), giving an
  :class:`AnalysisResult` (:mod:`.result`);
* :data:`CAPABILITIES` — what can be previewed and released (:mod:`.capabilities`);
* the application's live views: :mod:`.choices`, :mod:`.utility`, :mod:`.privacy`,
  :mod:`.preview`.
"""

from dpstudio.analysis.capabilities import (
    CAPABILITIES,
    Capability,
    capability,
    releasable,
    release_query,
    release_refusal,
    release_relation,
    require_release,
)
from dpstudio.analysis.dispatch import run
from dpstudio.analysis.request import MODEL_QUERIES, AnalysisSpec
from dpstudio.analysis.resolve import declared_fill, resolve
from dpstudio.analysis.result import AnalysisResult

__all__ = [
    "CAPABILITIES",
    "MODEL_QUERIES",
    "AnalysisResult",
    "AnalysisSpec",
    "Capability",
    "capability",
    "declared_fill",
    "releasable",
    "release_query",
    "release_refusal",
    "release_relation",
    "require_release",
    "resolve",
    "run",
]
