"""Weight-only int8 quantization for tract.

Every 2-D f32 initializer that feeds a MatMul (and the word-embedding table feeding Gather) is stored as int8,
symmetric per output channel (zero point 0), followed by a DequantizeLinear node that recreates the f32 weight;
tract / onnxruntime constant-fold it at load time, so inference stays f32 (tract's dynamic-int8 kernels are
slower than f32). Biases, LayerNorm parameters and small tensors stay f32.

  python quantize.py in_f32.onnx out_int8.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize(src, dst, min_elems=4096):
    m = onnx.load(src)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    # torch.onnx.export reads a weight shared by two layers (DeBERTa's key projection, used for
    # content and relative positions) through an Identity node; read the initializer directly, so
    # the weight is seen as a MatMul weight and quantized (it was left f32: 60 MB of DeBERTa v3 base)
    outputs = {o.name for o in g.output}
    alias = {n.output[0]: n.input[0] for n in g.node if n.op_type == "Identity" and n.input[0] in inits and n.output[0] not in outputs}
    if alias:
        kept = [n for n in g.node if not (n.op_type == "Identity" and n.output[0] in alias)]
        for n in kept:
            for k, x in enumerate(n.input):
                if x in alias:
                    n.input[k] = alias[x]
        del g.node[:]
        g.node.extend(kept)
    uses = {}
    for n in g.node:
        for k, x in enumerate(n.input):
            uses.setdefault(x, []).append((n, k))
    new_inits, new_nodes, drop = [], [], set()
    for name, init in inits.items():
        arr = numpy_helper.to_array(init)
        if arr.ndim != 2 or arr.dtype != np.float32 or arr.size < min_elems:
            continue
        us = uses.get(name, [])
        if not us:
            continue
        kinds = {(n.op_type, k) for n, k in us}
        if all(op == "MatMul" and k == 1 for op, k in kinds):
            axis = 1  # weight [in, out]: one scale per output column
        elif all(op == "Gather" and k == 0 for op, k in kinds):
            axis = 0  # embedding table [vocab, dim]: one scale per row
        else:
            continue
        amax = np.abs(arr).max(axis=1 - axis)
        scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
        shp = [1, -1] if axis == 1 else [-1, 1]
        q = np.clip(np.round(arr / scale.reshape(shp)), -127, 127).astype(np.int8)
        new_inits += [numpy_helper.from_array(q, name + "_q"), numpy_helper.from_array(scale, name + "_scale"),
                      numpy_helper.from_array(np.zeros_like(scale, dtype=np.int8), name + "_zp")]
        new_nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"], [name],
                                          name=name + "_dequant", axis=axis))
        drop.add(name)
    kept = [i for i in g.initializer if i.name not in drop]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(new_nodes + nodes)
    # drop stale value_info / graph inputs shadowing initializers
    for vi in list(g.input):
        if vi.name in drop:
            g.input.remove(vi)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    return len(drop)


if __name__ == "__main__":
    print("quantized tensors:", quantize(sys.argv[1], sys.argv[2]))
