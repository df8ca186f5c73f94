"""Official-parity scorers (`<name>.py`) and the suites that run them (`<name>_suite.py`), per benchmark."""
