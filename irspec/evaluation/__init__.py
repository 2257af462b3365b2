"""Evaluating runs (and other inputs) against judgments: the kernels' context, the engine, results."""
