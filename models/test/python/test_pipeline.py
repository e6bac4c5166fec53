import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from conftest import MODELS, synthetic
from pmf_models import algorithms, pipeline
from pmf_models.plainmodel import read_model, write_model
from pmf_models.quantize import choose_t, model_t, worst_case


@pytest.mark.parametrize("task,algorithm,k", [("spam", "lr", 2), ("spam", "svm", 2), ("topics", "mlr", 4)])
def test_fit_quantizes_with_negligible_disagreement(spec, task, algorithm, k):
    x, y = synthetic(600, k, seed=7)
    header, w_int, w = pipeline.fit(task, algorithm, [f"c{i}" for i in range(k)], spec, x, y)
    assert header["T"] == model_t(w_int, 15, spec["lMax"], header["b_in"]) <= choose_t(header["b_in"], 15, spec["lMax"])
    assert np.all(worst_case(w_int, 15, spec["lMax"]) < 2 ** (header["T"] - 1))
    assert np.any(worst_case(w_int, 15, spec["lMax"]) >= 2 ** (header["T"] - 2)) or header["T"] == header["b_in"]
    res = pipeline.evaluate(header, w_int, w, x, y)
    assert res["disagreements"] <= 0.001 * len(y) + 1
    assert abs(res["float"]["accuracy"] - res["quantized"]["accuracy"]) <= 0.01


def test_threshold_is_folded_into_the_bias(spec):
    x, y = synthetic(200, 2)
    _, _, w0 = pipeline.fit("spam", "lr", ["ham", "spam"], spec, x, y)
    _, _, w1 = pipeline.fit("spam", "lr", ["ham", "spam"], spec, x, y, threshold=1.5)
    assert w1[0, 0] == pytest.approx(w0[0, 0] - 1.5)
    np.testing.assert_allclose(w1[1:], w0[1:])


def test_chi2_selection_keeps_only_selected_rows(spec):
    x, y = synthetic(300, 3, seed=2)
    for algorithm in algorithms.TOPICS:
        header, _, w = pipeline.fit("topics", algorithm, ["a", "b", "c"], spec, x, y, select=20)
        assert header["selected"] == 20
        assert np.count_nonzero(np.any(w[1:] != 0, axis=1)) <= 20


def test_grnb_needs_boolean_spec_and_spam_needs_two_labels(spec):
    x, y = synthetic(100, 2)
    with pytest.raises(ValueError, match="boolean"):
        pipeline.fit("spam", "grnb", ["ham", "spam"], spec, x, y)
    with pytest.raises(ValueError, match="use one of"):
        pipeline.fit("spam", "mnb", ["ham", "spam"], spec, x, y)


def test_public_candidates_and_recall(spec):
    x, y = synthetic(1000, 8, seed=9)
    labels = [f"t{i}" for i in range(8)]
    header, w_int, _ = pipeline.fit_public(labels, spec, x, y, 0.05)
    assert header["role"] == "public" and header["algorithm"] == "mnb"
    r1, r3, r8 = (pipeline.candidate_recall(w_int, x, y, b) for b in (1, 3, 8))
    assert r1 <= r3 <= r8 == 1.0
    s = algorithms.int_scores(w_int, x)
    brute = np.mean([y[i] in sorted(range(8), key=lambda j: (-s[i, j], j))[:3] for i in range(len(y))])
    assert r3 == pytest.approx(brute)


def test_model_file_round_trip_and_corruption(tmp_path, spec):
    x, y = synthetic(200, 3)
    header, w_int, w = pipeline.fit("topics", "mnb", ["a", "b", "c"], spec, x, y)
    f = tmp_path / "m.pmfm"
    write_model(f, header, w_int, w)
    assert f.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["m.pmfm"]
    h2, wi2, wf2 = read_model(f)
    assert h2["format"] == "pmf-plain-model" and h2["formatVersion"] == 1
    np.testing.assert_array_equal(wi2, w_int)
    np.testing.assert_allclose(wf2, w.astype(np.float32))
    data = bytearray(f.read_bytes())
    data[-1] ^= 1
    f.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256"):
        read_model(f)
    with pytest.raises(ValueError, match="weights are"):
        write_model(tmp_path / "x", {**header, "N": 5}, w_int)


def test_cli_train_and_evaluate(tmp_path, spec):
    x, y = synthetic(400, 3, seed=11)
    dump_svmlight_file(x[:300], y[:300], str(tmp_path / "train.svm"), zero_based=True)
    dump_svmlight_file(x[300:], y[300:], str(tmp_path / "test.svm"), zero_based=True)
    meta = {"task": "topics", "labels": ["a", "b", "c"], "featureSpec": spec, "source": "synthetic"}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    model, public = tmp_path / "m.pmfm", tmp_path / "p.pmfm"
    cmd = [sys.executable, "-m", "pmf_models"]

    def run(*args):
        return subprocess.run([*cmd, *args], cwd=MODELS, capture_output=True, text=True, check=False)

    args = ["--data", str(tmp_path), "--algorithm", "ovr-svm", "--out", str(model), "--public-out", str(public)]
    out = run("train", *args).stdout
    assert "float vs quantized verdicts differ" in out and "candidates" in out
    report = tmp_path / "r.json"
    out = run("evaluate", "--data", str(tmp_path), "--model", str(model), "--report", str(report)).stdout
    assert "quantized: n=100" in out
    res = json.loads(report.read_text())
    assert len(res["scores"]) == 100 and res["quantized"]["accuracy"] > 0.9
    assert res["predictions"] == np.argmax(res["scores"], axis=1).tolist()
    q = res["quantized"]
    c = np.array(q["confusion"])  # macro F1: the mean of each topic's F1
    assert q["f1"] == pytest.approx(np.mean(2 * np.diag(c) / (c.sum(axis=0) + c.sum(axis=1))))
    assert f"f1={q['f1']:.4f}" in out
    bad = run("train", *args[:2], "--algorithm", "grnb", "--out", str(model))
    assert bad.returncode != 0 and "topics models use one of" in bad.stderr
