"""What the uncertainty guide's claims are measured with.

The claims themselves are written where their tests live (claims/test_uncertainty.py,
claims/test_uncertainty_health.py); `measures` holds the statistics of one run that they
compare, `rules` the typicality and ablation rules they build on.
"""
