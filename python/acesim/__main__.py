"""``python -m acesim ...``: the ``acesim`` command."""

import sys

from .cli import main

sys.exit(main())
