"""ragtt_nb: the notebook layer of ragtt (magics and widgets)."""

from __future__ import annotations

__all__: list[str] = []
