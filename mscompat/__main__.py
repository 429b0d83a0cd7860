import sys

from mscompat.cli import main

sys.exit(main())
