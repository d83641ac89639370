"""``ragtt serve``: the REST API over one project (``pip install 'ragtt[serve]'``).

from ragtt.serve import create_app
app = create_app("./proj")          # a FastAPI app; OpenAPI at /docs
"""

from __future__ import annotations

from ragtt.serve.app import check_host, create_app, serve

__all__ = ["check_host", "create_app", "serve"]
