from dpstudio.cli import main

raise SystemExit(main())
