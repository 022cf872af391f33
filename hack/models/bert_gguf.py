"""Shared by the embedder converters: write a BERT encoder as a llama.cpp GGUF, no torch.

Tensors arrive under their Hugging Face names ("encoder.layer.0.attention.self.query.weight",
Linear weights as [out, in]); the vocabulary comes from the model's tokenizer.json (WordPiece).
"""
import numpy as np
import gguf


def write(out, name, cfg, tokj, tensors, pooling, ftype="f16"):
    n_layers = cfg["num_hidden_layers"]
    w = gguf.GGUFWriter(out, "bert")
    w.add_name(name)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(n_layers)
    w.add_head_count(cfg["num_attention_heads"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_pooling_type(pooling)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if ftype == "f16" else gguf.LlamaFileType.ALL_F32)

    # WordPiece -> llama.cpp's "phantom space" form, as its own converter writes BERT vocabularies.
    vocab = tokj["model"]["vocab"]
    special = {t["content"] for t in tokj["added_tokens"] if t.get("special")}
    rev = {i: t for t, i in vocab.items()}
    tokens, toktypes = [], []
    for i in range(cfg["vocab_size"]):
        t = rev.get(i, f"[PAD{i}]")
        if t in special:
            toktypes.append(gguf.TokenType.CONTROL)
            tokens.append(t)
        else:
            toktypes.append(gguf.TokenType.NORMAL)
            tokens.append(t[2:] if t.startswith("##") else "\u2581" + t)
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(toktypes)
    w.add_token_type_count(cfg.get("type_vocab_size", 2))
    w.add_unk_token_id(vocab["[UNK]"])
    w.add_sep_token_id(vocab["[SEP]"])
    w.add_pad_token_id(vocab["[PAD]"])
    w.add_bos_token_id(vocab["[CLS]"])  # llama.cpp's BERT uses BOS as [CLS]
    w.add_mask_token_id(vocab["[MASK]"])
    w.add_add_bos_token(True)
    w.add_add_sep_token(True)

    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layers)
    for hf_name, t in tensors.items():
        if hf_name == "embeddings.position_ids" or hf_name.startswith("pooler."):
            continue
        new = tmap.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise SystemExit(f"unmapped tensor {hf_name}")
        t = np.asarray(t, dtype=np.float32)
        if ftype == "f16" and t.ndim == 2 and hf_name.endswith(".weight") and "token_type" not in hf_name:
            t = t.astype(np.float16)
        w.add_tensor(new, t)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print("wrote", out)
