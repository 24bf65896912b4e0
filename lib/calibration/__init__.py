"""Reproduction of "Calibrating a Bounded Net" (docs/RECIPES.md, Calibration).

Read in the order the data flows: ``models`` -> ``training`` -> ``experiment`` (the trained
nets in each valid float order) -> ``evaluation`` (the recipe's figures) -> ``health``; which
order runs where, cached, is the order builder's (``uncertainty_claims.orders.calibration``);
``figures`` and ``document`` draw and describe them for the report, and ``claims`` holds the
post's claims.
"""
