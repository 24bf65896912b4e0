"""The uncertainty guide's claims and what they are measured with.

`specs` holds every claim as a `ClaimSpec` (`SPECS`; the comparative ones' `COMPARISONS`),
`measures` the statistics of one run that they compare.
"""
