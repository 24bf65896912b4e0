"""The documents' claims, each defined once as a `ClaimSpec` (lib/report/claim.py).

One module per document holds its claims by id (`SPECS`): statement, section, the
published figure as printed, the reading of its qualitative words, a recorded finding and
the judge (what it measures and the rule it is held to). The claim tests in claims/, the
report and the robustness sweeps (lib/robustness) read these objects. The specs live in
lib, not beside the tests, because the sweeps in lib read them too.
"""
