"""``python -m compiler.cli``: the ``qmlir`` command."""

import sys

from compiler.cli import main

sys.exit(main())
