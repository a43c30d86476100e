#!/usr/bin/env python3
"""Reference values for trajan's agreement statistics (src/agreement/).

Reads the rating tables tests/agreement/*.csv (columns: item, rater, modes; modes separated by
`;`, empty = rated but unclassified, a missing row = not rated) and the mode list
tests/agreement/modes.txt, and prints JSON computed with scikit-learn and the `krippendorff`
package. The Rust unit tests in src/agreement/reference_tests.rs compare against that output to 1e-9.

Dev-only; run once and commit the output:

    pip install scikit-learn krippendorff numpy
    python3 scripts/agreement_reference.py > tests/agreement/reference.json

Choices (each undefined value is written as null; the Rust API returns None for it):
- Cohen's kappa: sklearn.metrics.cohen_kappa_score over the items both raters rated. sklearn
  returns nan when the expected agreement is 1 (e.g. both raters constant and equal) and raises
  on empty input (no item rated by both): both are null.
- Krippendorff's alpha: krippendorff.alpha(reliability_data=..., level_of_measurement='nominal')
  with NaN for a missing rating. The package raises ValueError when the value domain has one
  value (a mode nobody, or everybody, uses) or no unit has two ratings, and returns nan when the
  expected disagreement is 0: all are null.
- Precision, recall, F1: sklearn.metrics.precision_recall_fscore_support(average='binary',
  pos_label=1, zero_division=np.nan), over the items both raters rated, for every ordered pair
  (rater, reference). zero_division=nan (not 0) so that "undefined" stays visible: precision is
  null when the rater predicts no positive, recall when the reference has none, F1 when neither
  has any (F1 = 2tp / (2tp + fp + fn)).
- Percent agreement: sklearn.metrics.accuracy_score over the items both rated (null if none).
- Per mode, a rating becomes 1 if the mode is in the set, 0 if not (one-vs-rest). "nominal"
  treats each whole set of modes as one category.
"""

import csv
import json
import math
import os
import platform
import sys
import warnings
from itertools import combinations, permutations

import krippendorff
import numpy as np
import sklearn
from sklearn.metrics import accuracy_score, cohen_kappa_score, precision_recall_fscore_support

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "agreement")
TABLES = ["perfect", "imbalanced", "missing", "degenerate"]


def read_table(name):
    """(items, raters, cells) with cells[(item, rater)] = frozenset of modes; order of first appearance."""
    items, raters, cells = [], [], {}
    with open(os.path.join(ROOT, name + ".csv"), newline="") as f:
        for row in csv.DictReader(f):
            item, rater = row["item"], row["rater"]
            if item not in items:
                items.append(item)
            if rater not in raters:
                raters.append(rater)
            modes = frozenset(m for m in row["modes"].split(";") if m)
            cells[(item, rater)] = modes
    return items, raters, cells


def num(x):
    """A float with full precision, or None for nan."""
    x = float(x)
    return None if math.isnan(x) else x


def paired(items, cells, a, b, code):
    ys = [(code(cells[(i, a)]), code(cells[(i, b)])) for i in items if (i, a) in cells and (i, b) in cells]
    return [y[0] for y in ys], [y[1] for y in ys]


def kappa_entries(items, raters, cells, code):
    out = []
    for a, b in combinations(raters, 2):
        ya, yb = paired(items, cells, a, b, code)
        if ya:
            kappa = num(cohen_kappa_score(ya, yb))
            agreement = num(accuracy_score(ya, yb))
        else:
            kappa = agreement = None
        out.append({"a": a, "b": b, "n": len(ya), "kappa": kappa, "agreement": agreement})
    return out


def alpha_value(items, raters, cells, code):
    data = [[float(code(cells[(i, r)])) if (i, r) in cells else np.nan for i in items] for r in raters]
    try:
        return num(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError:
        return None


def classification_entries(items, raters, cells, code):
    out = []
    for rater, reference in permutations(raters, 2):
        pred, ref = paired(items, cells, rater, reference, code)
        tp = sum(1 for p, r in zip(pred, ref) if p == 1 and r == 1)
        fp = sum(1 for p, r in zip(pred, ref) if p == 1 and r == 0)
        fn = sum(1 for p, r in zip(pred, ref) if p == 0 and r == 1)
        tn = sum(1 for p, r in zip(pred, ref) if p == 0 and r == 0)
        if pred:
            p, r, f, _ = precision_recall_fscore_support(
                ref, pred, average="binary", pos_label=1, zero_division=np.nan
            )
            p, r, f = num(p), num(r), num(f)
        else:
            p = r = f = None
        out.append(
            {
                "rater": rater,
                "reference": reference,
                "n": len(pred),
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "tn": tn,
                "precision": p,
                "recall": r,
                "f1": f,
            }
        )
    return out


def main():
    warnings.simplefilter("ignore")  # sklearn/numpy warn on the degenerate cases on purpose
    with open(os.path.join(ROOT, "modes.txt")) as f:
        modes = [line.strip() for line in f if line.strip()]
    tables = {}
    for name in TABLES:
        items, raters, cells = read_table(name)
        sets = sorted({s for s in cells.values()}, key=lambda s: sorted(s))
        nominal_code = {s: k for k, s in enumerate(sets)}.__getitem__
        coverage = {}
        for r in raters:
            rated = [cells[(i, r)] for i in items if (i, r) in cells]
            coverage[r] = sum(1 for s in rated if s) / len(rated) if rated else None
        per_mode = {}
        for m in modes:
            code = lambda s, m=m: 1 if m in s else 0  # noqa: E731
            per_mode[m] = {
                "kappa": kappa_entries(items, raters, cells, code),
                "alpha": alpha_value(items, raters, cells, code),
                "classification": classification_entries(items, raters, cells, code),
            }
        tables[name] = {
            "items": items,
            "raters": raters,
            "coverage": coverage,
            "nominal": {
                "kappa": kappa_entries(items, raters, cells, nominal_code),
                "alpha": alpha_value(items, raters, cells, nominal_code),
            },
            "per_mode": per_mode,
        }
    out = {
        "generated_by": "python3 scripts/agreement_reference.py > tests/agreement/reference.json",
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scikit-learn": sklearn.__version__,
            "krippendorff": getattr(krippendorff, "__version__", None) or package_version("krippendorff"),
        },
        "modes": modes,
        "tables": tables,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


def package_version(name):
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
