"""Provider CLI, Python half. The TypeScript CLI (models/cli.ts) extracts
features and calls this; it can also be run directly on an exported folder:

    python -m pmf_models train    --data DIR --algorithm A --out MODEL [options]
    python -m pmf_models evaluate --data DIR --model MODEL [--report JSON]   (metrics, scores, predictions)
    python -m pmf_models bench    --data DIR

DIR holds meta.json ({"task", "labels", "featureSpec"}), train.svm and
test.svm in LIBSVM format (label = index into labels, feature = row 1..N).
"""

import argparse
import json
import sys
from pathlib import Path

from . import pipeline, threshold
from .plainmodel import read_model, write_model


def load(data_dir, part, spec):
    path = Path(data_dir) / f"{part}.svm"
    if not path.exists() or path.stat().st_size == 0:
        return None, None
    return pipeline.load_libsvm(str(path), spec["N"])


def print_metrics(title, m):
    fpr = f" fpr={m['fpr']:.4f}" if "fpr" in m else ""
    print(
        f"{title}: n={m['n']} accuracy={m['accuracy']:.4f} precision={m['precision']:.4f} recall={m['recall']:.4f}"
        f" f1={m['f1']:.4f}{fpr}"
    )


def print_side_by_side(res, labels):
    if "float" in res:
        print_metrics("float    ", res["float"])
    print_metrics("quantized", res["quantized"])
    if "disagreements" in res:
        n = res["quantized"]["n"]
        print(
            f"float vs quantized verdicts differ on {res['disagreements']}/{n} ({res['disagreements'] / max(n, 1):.4%})"
        )
    width = max(len(label) for label in labels)
    print("confusion (rows = true, columns = predicted, quantized):")
    for label, row in zip(labels, res["quantized"]["confusion"], strict=True):
        print(f"  {label:>{width}} " + " ".join(f"{v:6d}" for v in row))


def cmd_train(a):
    meta = json.loads((Path(a.data) / "meta.json").read_text())
    spec, labels = meta["featureSpec"], meta["labels"]
    x, y = load(a.data, "train", spec)
    if x is None:
        sys.exit("no training examples")
    fit_kw = {"select": a.select, "c": a.C, "alpha": a.alpha}
    t, choice = a.threshold, None
    if t is None and meta["task"] == "spam":
        t, choice = threshold.choose(a.algorithm, labels, spec, x, y, a.target_fpr, **fit_kw)
        print(
            f"threshold {t:.4f}: {choice['fpr']:.4%} of {choice['ham']} held-out training ham scored spam"
            f" (target {a.target_fpr:.2%}, {choice['method']}), recall {choice['recall']:.4f}"
        )
    header, w_int, w = pipeline.fit(
        meta["task"], a.algorithm, labels, spec, x, y, b_in=a.b_in, threshold=t or 0.0, **fit_kw
    )
    if choice:
        header["thresholdChoice"] = choice
    header["role"] = "private"
    header["trainedOn"] = {"source": meta.get("source", ""), "train": int(x.shape[0])}
    report = {"header": header}
    xt, yt = load(a.data, "test", spec)
    if xt is not None:
        res = pipeline.evaluate(header, w_int, w, xt, yt)
        header["heldOut"] = {k: res[k] for k in ("float", "quantized")} | {"disagreements": res["disagreements"]}
        print(f"{a.algorithm} on {header['trainedOn']['source']}: trained on {x.shape[0]}, held out {xt.shape[0]}")
        print_side_by_side(res, labels)
    write_model(a.out, header, w_int, None if a.no_float else w)
    print(f"wrote {a.out} (N={header['N']}, B={header['B']}, b_in={header['b_in']}, T={header['T']})")
    if a.public_out:
        if meta["task"] != "topics":
            sys.exit("--public-out is for topic models")
        ph, pw, _ = pipeline.fit_public(labels, spec, x, y, a.public_fraction, b_in=header["b_in"])
        write_model(a.public_out, ph, pw)
        if xt is not None:
            for b in (5, 10, 20):
                print(
                    f"public model: true topic among {b} candidates for {pipeline.candidate_recall(pw, xt, yt, b):.4f}"
                )
        print(f"wrote {a.public_out} (public candidate model, {a.public_fraction:.0%} of the training data)")
    if a.report:
        Path(a.report).write_text(json.dumps(report))


def cmd_evaluate(a):
    header, w_int, w = read_model(a.model)
    x, y = load(a.data, "test", header["featureSpec"])
    if x is None:
        sys.exit("no examples to evaluate")
    res = pipeline.evaluate(header, w_int, w, x, y)
    print(f"{header['algorithm']} model {a.model} on {x.shape[0]} examples")
    print_side_by_side(res, header["labels"])
    if a.report:
        res["scores"] = res["scores"].tolist()
        res["predictions"] = res["predictions"].tolist()
        Path(a.report).write_text(json.dumps(res))


def cmd_bench(a):
    from .bench import run

    for row in run(Path(a.data), quick=a.quick):
        print(json.dumps(row), flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m pmf_models")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", required=True)
    t.add_argument("--algorithm", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--b-in", type=int, dest="b_in")
    t.add_argument("--select", type=int, help="keep the N' best rows by chi-square")
    t.add_argument("--threshold", type=float, help="spam iff score >= threshold (default: chosen for --target-fpr)")
    t.add_argument(
        "--target-fpr",
        type=float,
        default=threshold.DEFAULT_TARGET_FPR,
        help="spam models: choose the threshold that sends at most this share of held-out ham to Junk",
    )
    t.add_argument("--C", type=float, default=1.0)
    t.add_argument("--alpha", type=float, default=0.1)
    t.add_argument("--no-float", action="store_true", help="omit float weights from the model file")
    t.add_argument("--public-out")
    t.add_argument("--public-fraction", type=float, default=0.05)
    t.add_argument("--report")
    e = sub.add_parser("evaluate")
    e.add_argument("--data", required=True)
    e.add_argument("--model", required=True)
    e.add_argument("--report")
    b = sub.add_parser("bench")
    b.add_argument("--data", required=True)
    b.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    try:
        {"train": cmd_train, "evaluate": cmd_evaluate, "bench": cmd_bench}[a.cmd](a)
    except (ValueError, OSError) as err:
        sys.exit(f"error: {err}")


if __name__ == "__main__":
    main()
