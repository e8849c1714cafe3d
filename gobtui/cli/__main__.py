"""`python -m gobtui.cli`: the console script's code."""

from gobtui.cli.entry import main

raise SystemExit(main())
