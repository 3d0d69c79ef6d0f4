"""Write the dynamic-int8 variant of the shipped model, for the quantization-form comparison in the model card and
the benchmarks: onnxruntime's quantize_dynamic on the f32 twin (bench/tools/f32_model.py), i.e. int8 weights
(per channel) feeding MatMulInteger, with activations quantized at run time by DynamicQuantizeLinear.
Usage: python3 bench/tools/dyn_int8_model.py [target/bench/models/nli-minilm-l6-f32.onnx] [target/bench/models/nli-minilm-l6-dynint8.onnx]"""
import collections, os, sys

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic

src = sys.argv[1] if len(sys.argv) > 1 else "target/bench/models/nli-minilm-l6-f32.onnx"
dst = sys.argv[2] if len(sys.argv) > 2 else "target/bench/models/nli-minilm-l6-dynint8.onnx"
os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
# MatMul only (the same weights the shipped file stores as int8, minus the embedding tables); QInt8 weights and
# uint8 activations are what MatMulInteger on x86/wasm expects.
quantize_dynamic(src, dst, op_types_to_quantize=["MatMul"], per_channel=True, weight_type=QuantType.QInt8)
ops = collections.Counter(n.op_type for n in onnx.load(dst).graph.node)
print(f"{dst}: {os.path.getsize(dst) / 1e6:.1f} MB, MatMulInteger {ops['MatMulInteger']}, "
      f"DynamicQuantizeLinear {ops['DynamicQuantizeLinear']}, MatMul left {ops['MatMul']}")
