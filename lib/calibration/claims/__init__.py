"""What the calibration post's claims (claims/test_calibration.py) are measured with.

`measures` holds the statistics of the per-seed figures they compare (and the comparisons
that the sensitivity variants re-measure), `bootstrap` the test-image resamples behind their
intervals, `sensitivity` the comparative claims under the binnings and OOD scores the post
did not choose.
"""
