"""What the calibration post's claims (claims/test_calibration.py) are measured with, and the
post in the report.

`measures` holds the statistics of the per-seed figures they compare (and the comparisons
that the sensitivity variants re-measure), `bootstrap` the test-image resamples behind their
intervals, `sensitivity` the comparative claims under the binnings and OOD scores the post
did not choose; `document` and `figures` the post's section and figures in the report,
`sections` the post's headings its claims are filed under.
"""
