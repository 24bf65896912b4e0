"""The verdict engine: claims as specs, how each is judged over float orders, comparisons of
effects, and their sweeps over seeds.

`claims` (a claim written on its test), `claim` (a claim's spec, its verdict and record),
`verdict` (a claim on one order), `prediction` (a figure judged over all orders), `effects`
(a comparative claim as data), `sweep` (a comparison on other seeds). It imports no document: the documents' packages import it.
"""
