"""python -m buzz_signer.cli: the same as buzz-admin."""

from . import main

main()
