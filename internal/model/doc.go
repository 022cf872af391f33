// Package model talks to OpenAI-compatible model servers (OpenAI, vLLM,
// Ollama, llama.cpp, TEI, …): embeddings today; chat with tools and
// streaming, and rerank, with the route runtime. It imports nothing from
// Kubernetes.
package model
