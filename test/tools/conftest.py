"""Where the repository is, for running the tools as subprocesses from its root."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
