"""Export layer: privatized results as files, manifests, reports and scripts.

Tables (:mod:`~dpstudio.export.tables`, :mod:`~dpstudio.export.writers`) and manifests
(:mod:`~dpstudio.export.manifest`) need no Qt. The report (:mod:`~dpstudio.export.report`,
:mod:`~dpstudio.export.plots`) draws with QtGui only — never widgets — and is imported
only when a report is asked for.
"""

from dpstudio.export.bundle import BundleInput, RenderedFile, file_names, render_bundle
from dpstudio.export.errors import ExportError
from dpstudio.export.manifest import MANIFEST_VERSION, ManifestCheck, verify_manifest
from dpstudio.export.tables import (
    ExportTable,
    coefficients_table,
    public_result,
    records_table,
    release_table,
)
from dpstudio.export.writers import FORMATS, neutralize, normalize_format, render_table

__all__ = [
    "FORMATS",
    "MANIFEST_VERSION",
    "BundleInput",
    "ExportError",
    "ExportTable",
    "ManifestCheck",
    "RenderedFile",
    "coefficients_table",
    "file_names",
    "neutralize",
    "normalize_format",
    "public_result",
    "records_table",
    "release_table",
    "render_bundle",
    "render_table",
    "verify_manifest",
]
