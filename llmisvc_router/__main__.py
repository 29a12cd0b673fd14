from llmisvc_router.cli import main

raise SystemExit(main())
