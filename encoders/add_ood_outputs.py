"""Give the exported encoders what the OOD baselines need, without retraining.

For each fmnist-<name>.onnx this script
  * adds a graph output "activations" (batch, L): the maximum of each ReLU
    layer's output over its channels and positions, in graph order (COMBOOD's
    per-layer maximum activations; the last one is the maximum of the features);
  * writes fmnist-<name>-classifier.npz with the final linear layer,
    "weight" (C, d) and "bias" (C,), so that logits = features·weightᵀ + bias
    (ViM's origin −pinv(W)·b needs them).
The features and logits outputs are untouched. Run with Debian's python3-onnx:
    /usr/bin/python3 encoders/add_ood_outputs.py
It is idempotent: a model that already has "activations" is left as it is.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def rewrite(name):
    path = os.path.join(HERE, f"fmnist-{name}.onnx")
    model = onnx.load(path)
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    gemm = [n for n in graph.node if n.op_type == "Gemm" and n.output[0] == "logits"]
    if len(gemm) != 1:
        sys.exit(f"{path}: no Gemm node produces the logits")
    weight, bias = inits[gemm[0].input[1]], inits[gemm[0].input[2]]
    attrs = {a.name: helper.get_attribute_value(a) for a in gemm[0].attribute}
    if attrs.get("transB", 0) != 1 or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
        sys.exit(f"{path}: the logits Gemm is not features·Wᵀ + b")
    np.savez(os.path.join(HERE, f"fmnist-{name}-classifier.npz"),
             weight=weight.astype(np.float32), bias=bias.astype(np.float32))

    if any(o.name == "activations" for o in graph.output):
        print(f"{path}: already has activations")
        return
    maxima = []
    for i, node in enumerate([n for n in graph.node if n.op_type == "Relu"]):
        out = node.output[0]
        axes = [1] if out == "features" else [1, 2, 3]
        red = f"/ood/relu{i}_max"
        graph.node.append(helper.make_node("ReduceMax", [out], [red], axes=axes, keepdims=0))
        col = f"/ood/relu{i}_col"
        graph.node.append(helper.make_node("Unsqueeze", [red, "/ood/axis1"], [col]))
        maxima.append(col)
    graph.initializer.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "/ood/axis1"))
    graph.node.append(helper.make_node("Concat", maxima, ["activations"], axis=1))
    graph.output.append(helper.make_tensor_value_info("activations", TensorProto.FLOAT, ["batch", len(maxima)]))
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print(f"{path}: activations of {len(maxima)} ReLU layers; classifier {weight.shape}")


if __name__ == "__main__":
    for name in ("supervised", "simclr"):
        rewrite(name)
