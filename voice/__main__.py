"""``python -m voice`` is the ``voice`` command."""

import sys

from voice.cli import main

sys.exit(main())
