"""Beyond the published seeds and choices: intervals and robustness of the comparative claims.

``effects`` states a comparative claim as data; ``calibration`` and ``uncertainty`` hold
each document's comparative claims (the claim tests measure with them); ``bootstrap``
resamples the test images; ``sensitivity`` varies the post's binning and OOD score;
``sweep`` re-evaluates the claims on other seeds;
``summary`` assembles the report's section. Resampling primitives: ``uncertainty_claims.stats``.
"""
