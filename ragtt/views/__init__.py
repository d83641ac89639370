"""The widgets' model state, computed from a Project, with no widget stack.

Each module's ``model(proj, ...)`` returns the traits a fresh widget has (``_data`` and the
rest), with bulk arrays as ``{"dtype", "shape", "view"}`` buffers. The widget classes in
the notebook package build on these modules, and so does ``ragtt serve``'s ``/ui`` dashboard:
like all of ``ragtt``, nothing here imports IPython, ipywidgets or anywidget
(``tests/core/test_layers.py`` pins it). ``static_file`` finds the widgets' built JS and CSS, in the wheel or the repo.
"""

from __future__ import annotations

from ragtt.views.wire import static_file

__all__ = ["static_file"]
