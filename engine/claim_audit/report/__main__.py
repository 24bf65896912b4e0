"""`python -m claim_audit.report`: the engine's commands, as `python -m claim_audit`."""

from ..__main__ import main

if __name__ == "__main__":
    raise SystemExit(main())
