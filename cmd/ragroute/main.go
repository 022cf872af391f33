// Command ragroute is the one binary of ragroute. Subcommands:
//
//	manager   run the operator (reconciles PlatformPrompt, KnowledgeStore, QueryRoute, RouteEvaluation)
//	chunk     print the chunks of Markdown files as JSON lines (no Milvus)
//	ingest    one ingestion run: sources → chunks → embeddings → Milvus
//	serve     serve one route's query API from its rendered config
//	eval      measure retrieval quality of chunking and search ablations
//	eval-answers  score whole answers: grounding, citations, not-found, latency
//	eval-agentic  compare single-round and agentic turns on multi-part questions
//	eval-route    score a deployed route over HTTP, as an identity it trusts
//	feedback export  the route's down-rated answers as RouteEvaluation questions
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "manager":
		return runManager(args[1:], stderr)
	case "chunk":
		return runChunk(args[1:], stdout, stderr)
	case "ingest":
		return runIngest(args[1:], stdout, stderr)
	case "serve":
		return runServe(args[1:], stderr)
	case "eval":
		return runEval(args[1:], stdout, stderr)
	case "eval-answers":
		return runEvalAnswers(args[1:], stdout, stderr)
	case "eval-agentic":
		return runEvalAgentic(args[1:], stdout, stderr)
	case "eval-route":
		return runEvalRoute(args[1:], stdout, stderr)
	case "feedback":
		return runFeedback(args[1:], stdout, stderr, os.Getenv)
	case "version", "--version":
		fmt.Fprintln(stdout, version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "ragroute: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: ragroute <command> [flags]

Commands:
  manager   run the operator: reconcile PlatformPrompts, KnowledgeStores, QueryRoutes and RouteEvaluations
  chunk     print the chunks of Markdown files and folders as JSON lines
  ingest    ingest Markdown sources into Milvus (--config ingest.json)
  serve     serve a route's query API (--config route.json)
  eval      measure retrieval on a corpus and questions (make eval)
  eval-answers  run the questions through the route's turn with a chat model and score the answers (make eval-answers)
  eval-agentic  run multi-part questions in single-round and agentic mode and score both (make eval-agentic)
  eval-route    score a deployed route over HTTP: retrieval, answers or both, with thresholds (exit 3)
  feedback export  write the route's down-rated answers as RouteEvaluation questions (JSONL), read from
                the route's Redis with its own credentials (--config route.json)
  version   print the version

Run 'ragroute <command> -h' for a command's flags.
`)
}
