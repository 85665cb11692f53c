"""The frozen executable's entry point: the ``dpstudio`` command, as the wheel's script.

PyInstaller starts from a script, not from an entry point declared in pyproject.toml, so
this is the one line ``[project.scripts]`` generates: ``dpstudio.cli:main``.
"""

import sys

from dpstudio.cli import main

if __name__ == "__main__":
    sys.exit(main())
