"""Write the f32 twin of the shipped weight-only int8 model: every DequantizeLinear of a constant
weight is folded into an f32 initializer (q - zero_point) * scale, so the graph is the same
architecture with f32 weights (what the int8 file computes after tract folds it at load).
The benchmarks compare runtimes on the *same* int8 and f32 files; the f32 one is this file.
Usage: python3 bench/tools/f32_model.py [models/nli-minilm-l6-int8.onnx] [target/bench/models/nli-minilm-l6-f32.onnx]"""
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper

src = sys.argv[1] if len(sys.argv) > 1 else "models/nli-minilm-l6-int8.onnx"
dst = sys.argv[2] if len(sys.argv) > 2 else "target/bench/models/nli-minilm-l6-f32.onnx"
m = onnx.load(src)
inits = {t.name: t for t in m.graph.initializer}
keep, new_inits, used = [], [], set()
for n in m.graph.node:
    if n.op_type == "DequantizeLinear" and all(i in inits for i in n.input):
        q, scale = numpy_helper.to_array(inits[n.input[0]]), numpy_helper.to_array(inits[n.input[1]])
        zp = numpy_helper.to_array(inits[n.input[2]]) if len(n.input) > 2 else np.zeros_like(scale, dtype=np.int32)
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        shape = [1] * q.ndim
        if scale.ndim == 1 and scale.size > 1:
            shape[axis] = scale.size
        w = (q.astype(np.float32) - zp.astype(np.float32).reshape(shape)) * scale.astype(np.float32).reshape(shape)
        new_inits.append(numpy_helper.from_array(w.astype(np.float32), n.output[0]))
        used.update(n.input)
    else:
        keep.append(n)
del m.graph.node[:]
m.graph.node.extend(keep)
rest = [t for t in m.graph.initializer if t.name not in used]
del m.graph.initializer[:]
m.graph.initializer.extend(rest + new_inits)
onnx.checker.check_model(m)
os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
onnx.save(m, dst)
print(f"{dst}: {os.path.getsize(dst) / 1e6:.1f} MB (from {src}, {len(new_inits)} weights dequantized)")
