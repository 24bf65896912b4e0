"""The calibration post's claims and what they are measured with.

`specs` holds every claim as a `ClaimSpec` (`SPECS`; the comparative ones' `COMPARISONS`),
`measures` the statistics of the per-seed figures they compare, `bootstrap` the test-image
resamples behind their intervals, `sensitivity` the comparative claims under the binnings
and OOD scores the post did not choose.
"""
