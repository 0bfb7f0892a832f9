import sys

from kite_skills.cli import main

sys.exit(main())
