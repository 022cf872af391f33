package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/testenv"
)

// DEMO_MODELS=scripted (the demo's test in make test): the scripted
// OpenAI-compatible server the tests use stands in for the local models,
// in this process: hashed bags of words for the embedder, the query's
// words for the reranker, and a chat model that answers with the first
// sentence of each of the first two fragments it was given, cited.
// Everything else is what `make demo` runs.

// scriptedDimensions are the sample store's (all-MiniLM-L6-v2's).
const scriptedDimensions = 384

func (d *demo) startScriptedModels(context.Context) error {
	m, err := testenv.StartModelServerOn("127.0.0.1:0", scriptedDimensions)
	if err != nil {
		return err
	}
	m.Chat = scriptedChat
	d.scripted = m
	// The Russian samples' embedder too: hashed words read any script.
	d.chatURL, d.embedURL, d.rerankURL, d.e5URL = m.BaseURL(), m.BaseURL(), m.URL, m.BaseURL()
	fmt.Printf("    chat, embedder and reranker  %s  (DEMO_MODELS=scripted: the tests' scripted model server)\n", m.URL)
	return nil
}

// fragmentBlock is one packed fragment as the route fences it for the
// model: "⟦data-…⟧ S1 | label | source", its text, "⟦data-…⟧ end S1".
var fragmentBlock = regexp.MustCompile(`(?s)⟦data-[0-9a-f]+⟧ (S\d+) \| [^\n]*\n(.*?)\n⟦data-[0-9a-f]+⟧ end S\d+`)

// scriptedChat answers from the fragments in the request: the first
// sentence of each of the first two, with its marker; a request with
// none (the rephrase before not-found) gets the user's question back.
func scriptedChat(req testenv.ChatRequest) testenv.ChatReply {
	var answer []string
	question := ""
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			question = msg.Content
		}
		for _, block := range fragmentBlock.FindAllStringSubmatch(msg.Content, -1) {
			if sentence := firstSentence(block[2]); sentence != "" && len(answer) < 2 {
				answer = append(answer, strings.TrimSuffix(sentence, ".")+" ["+block[1]+"].")
			}
		}
	}
	if len(answer) == 0 {
		return testenv.ChatReply{Content: question}
	}
	return testenv.ChatReply{Content: strings.Join(answer, " ")}
}

// firstSentence is a fragment's first sentence of prose, headings passed
// over; "" when it has none.
func firstSentence(text string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") || len(strings.Fields(line)) < 4 {
			continue
		}
		if i := strings.Index(line, ". "); i > 0 {
			line = line[:i+1]
		}
		return line
	}
	return ""
}
