"""``python -m precision_lint.verify verify ...`` (same as ``precision-lint verify``)."""
import sys

from . import main

sys.exit(main())
