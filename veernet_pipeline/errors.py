"""Failures an operator causes or fixes, each with advice on what to do.

The library raises these where it finds the cause (no `champion` alias, no archive, no model,
bad params); runners translate them: the CLI prints the message, Dagster raises a `Failure`
whose description (the advice first) is the top message of the run page (`assets/failures.py`).
Each also subclasses the builtin error its callers caught before, so existing handling holds.
"""

from __future__ import annotations


class OperatorError(Exception):
    """A failure the operator can fix; `advice` says how, in the Dagster UI first, then in a shell."""

    advice = "See docs/runbooks/."

    def __init__(self, message: str, advice: str | None = None) -> None:
        super().__init__(message)
        if advice is not None:
            self.advice = advice


class NoChampion(OperatorError, LookupError):
    advice = ("No model is promoted yet. In the Dagster UI materialise `model_evaluation` (it moves `champion` "
              "when the gate passes), or promote a version by hand: `veernet promote --model veernet-multiclass "
              "--version N --reason TEXT` (docs/runbooks/train-and-promote.md); then re-execute this run.")


class MissingModel(OperatorError, FileNotFoundError):
    advice = ("The model this step needs does not exist. In the Dagster UI materialise `binary_model` and "
              "`multiclass_model` (group `models`), or set `infer.model_uri` in params.yaml / the launchpad "
              "overrides to a registered version (list them with `veernet doctor` or the MLflow UI).")


class EmptyArchive(OperatorError, FileNotFoundError):
    advice = ("There is no scan to work on. Put TIFF scans under the archive folder (`paths.raw` in params.yaml), "
              "or point `paths.raw` at your archive (launchpad: `overrides: [paths.raw=/path/to/scans]`); "
              "then re-execute this run. `veernet doctor` checks the folder.")


class BadParams(OperatorError, ValueError):
    advice = ("The parameters do not validate. Fix params.yaml, or this run's launchpad config "
              "(`resources: pipeline: config:` profile and overrides); the message names the key. "
              "Then launch a new run.")
