"""``python -m seed.report``: the same as ``seed report``."""

import sys

from seed.report import main

sys.exit(main())
