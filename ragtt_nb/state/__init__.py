"""The four widgets' model state, computed from a Project, with no widget stack.

Each module's ``model(proj, ...)`` returns the traits a fresh widget has (``_data`` and the
rest), with bulk arrays as ``{"dtype", "shape", "view"}`` buffers. The widget classes in
``ragtt_nb`` build on these modules, and so does ``ragtt serve``'s ``/ui`` dashboard, which must
not import IPython, ipywidgets or anywidget: nothing under ``ragtt_nb.state`` does (a test
pins it). ``static_file`` finds the widgets' built JS and CSS, in the wheel or the repo.
"""

from __future__ import annotations

from ragtt_nb._wire import static_file

__all__ = ["static_file"]
