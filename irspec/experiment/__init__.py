"""The steps after evaluation: comparing runs, power, agreement of judgments, standardised scores, groups."""
