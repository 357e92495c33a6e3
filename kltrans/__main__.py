import sys
from kltrans.cli import main
sys.exit(main())
