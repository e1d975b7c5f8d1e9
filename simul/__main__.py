from simul.cli import main

raise SystemExit(main())
