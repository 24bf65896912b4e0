"""The calibration post's sections its claims are filed under: each named exactly as one of
the post's headings, so the report links it to that heading (`Source(headings=...)`)."""

S_HEAD = "Two nets, one head"
S_FORECAST = "The forecaster's test, in code"
S_BRAG = "Why the bounded net brags"
S_KNOB = "One knob, fit on held-out data"
S_OOD = "The number the softmax throws away"
S_WOBBLE = "The channel that does not wobble"
S_SETTLED = "What the experiment settled"

HEADINGS = (S_HEAD, S_FORECAST, S_BRAG, S_KNOB, S_OOD, S_WOBBLE, S_SETTLED)
