"""What the uncertainty guide's claims are measured with, and the guide in the report.

The claims themselves are written where their tests live (claims/test_uncertainty.py,
claims/test_uncertainty_health.py); `measures` holds the statistics of one run that they
compare (claims/readings/uncertainty_rules.py the typicality and ablation rules they build on);
`document` and `figures` the guide's section and figure in the report.
"""
