from gpt_kata_practice.cli import main

raise SystemExit(main())
