"""``ragtt report NOTEBOOK -o report.html [--execute]``: registered through the ``ragtt.cli``
entry-point group, so the core CLI never imports the notebook layer."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["cmd_report", "register"]


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    help_ = "write a notebook as one offline HTML report (widgets work with no kernel and no network)"
    p = subparsers.add_parser("report", parents=[common], help=help_, description=help_)
    p.add_argument("notebook", type=Path)
    p.add_argument("-o", "--output", type=Path, help="the HTML file (default: beside the notebook)")
    p.add_argument("--execute", action="store_true", help="run the notebook first (widget state is stored)")
    p.add_argument(
        "--allow-errors",
        action="store_true",
        help="with --execute: a failing cell shows its error in the report instead of stopping it",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="with --execute: run against the projects the notebook opens (default: throwaway copies of them)",
    )
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell with --execute (default 600)")
    p.add_argument(
        "--trust",
        action="store_true",
        help="keep the notebook's scripts and raw HTML (default: sanitized, scripts dropped)",
    )
    p.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from nbclient.exceptions import CellExecutionError

    from ragtt_nb.export import ReportError, export_report

    if not args.notebook.is_file():
        raise FileNotFoundError(f"no notebook at {args.notebook}")
    if args.allow_errors and not args.execute:
        raise ReportError("--allow-errors needs --execute (only a cell that runs can fail)")
    if args.allow_writes and not args.execute:
        raise ReportError("--allow-writes needs --execute (only a notebook that runs can write)")
    if args.embedder == "hash":
        os.environ["RAGTT_EMBEDDER"] = "hash"  # the executed notebook's kernel inherits it
    try:
        out = export_report(
            args.notebook,
            args.output,
            execute=args.execute,
            allow_errors=args.allow_errors,
            trusted=args.trust,
            timeout=args.timeout,
            allow_writes=args.allow_writes,
        )
    except CellExecutionError as exc:
        print(
            f"ragtt report: a cell of {args.notebook} failed, no report written (--allow-errors writes it "
            f"with the error shown):\n{exc}",
            file=sys.stderr,
        )
        return 1
    size = out.stat().st_size
    if args.json:
        print(json.dumps({"path": str(out), "bytes": size}))
    else:
        print(f"wrote {out} ({size / 1e6:.1f} MB)")
    return 0
