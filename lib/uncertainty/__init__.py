"""Reproduction of the Flax NNX guide "Uncertainty Estimation" (docs/RECIPES.md, Uncertainty).

Read in the order the data flows: ``config`` (the recipe) -> ``data`` -> ``model`` ->
``training`` -> ``prediction`` -> ``experiment`` (its entry point ``run``, and the figures the
guide prints, ``headline_figures``) -> ``health``; the runs the claims read, in their orders
and cached, are the order builder's (``uncertainty_claims.orders.uncertainty``); ``figures``
and ``document`` draw and describe them for the report, and ``claims`` holds the guide's
claims. Import from the modules themselves: this package
imports none of them, so a process that only draws the figures does not load JAX.
"""
