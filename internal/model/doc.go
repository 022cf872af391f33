// Package model talks to OpenAI-compatible model servers (OpenAI, vLLM,
// Ollama, llama.cpp, TEI, …): embeddings (cut to the embedder's input
// limit, behind the query or document prefix the model was trained with:
// WithPrefix; one client shared by a replica's questions and its grounding
// check, the check first: Shared) and streamed chat with tool calls. Clients get their endpoints
// and keys as values from cmd/ragroute. It imports nothing from Kubernetes.
package model
