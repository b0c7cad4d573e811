"""``python -m api.cli``: the same as the ``sgam`` command."""

import sys

from api.cli import main

sys.exit(main())
