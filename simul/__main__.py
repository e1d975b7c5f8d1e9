from simul.commands.cli import main

raise SystemExit(main())
