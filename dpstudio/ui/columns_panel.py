"""The former read-only column list, now the editable :mod:`dpstudio.ui.schema_panel`.

Kept so that ``from dpstudio.ui.columns_panel import ColumnsPanel`` still works.
"""

from __future__ import annotations

from dpstudio.ui.schema_panel import SchemaPanel as ColumnsPanel

__all__ = ["ColumnsPanel"]
