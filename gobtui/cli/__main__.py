"""`python -m gobtui.cli`: the console script's code."""

from gobtui.cli.dispatch import main

raise SystemExit(main())
