"""The verdict engine: claims as specs and their verdicts over float orders (`claim`, on
`verdict`, `prediction` and `share`), comparisons of effects (`effects`) and their sweeps
over seeds (`sweep`). It imports no document: the documents' packages import it."""
