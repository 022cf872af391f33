package lab

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
)

// peerFile is what another system's retrieval wrote (hack/compare): per
// configuration, its ingestion (and why it failed, if it did) and per
// question its top results and the time it took.
type peerFile struct {
	Embedder string `json:"embedder"`
	Configs  map[string]struct {
		Chunks            int     `json:"chunks"`
		LargestChunkBytes int     `json:"largest_chunk_bytes"`
		IngestSeconds     float64 `json:"ingest_seconds"`
		Failure           string  `json:"failure"`
		Questions         map[string]struct {
			Millis  float64     `json:"ms"`
			Results []eval.Unit `json:"results"`
		} `json:"questions"`
	} `json:"configs"`
}

// peer is one configuration of another system: its ingestion, and its
// outcomes unless the ingestion failed.
type peer struct {
	name      string
	ingestion IngestionRow
	outcomes  []eval.Outcome
}

// failed reports whether the configuration's ingestion failed: it has no
// outcomes to score.
func (p peer) failed() bool { return p.ingestion.Failure != "" }

// loadPeer reads another system's results for the same questions (none:
// its ingestion only).
func loadPeer(path string, questions []eval.Question) ([]peer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("peer results: %w", err)
	}
	var f peerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("peer results %s: %w", path, err)
	}
	names := make([]string, 0, len(f.Configs))
	for name := range f.Configs {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []peer
	for _, name := range names {
		c := f.Configs[name]
		p := peer{name: name, ingestion: IngestionRow{Config: name, Chunks: c.Chunks, LargestChunkBytes: c.LargestChunkBytes,
			Seconds: c.IngestSeconds, Failure: c.Failure}}
		if p.failed() {
			out = append(out, p)
			continue
		}
		p.outcomes = make([]eval.Outcome, len(questions))
		for i, q := range questions {
			got, ok := c.Questions[q.ID]
			if !ok {
				return nil, fmt.Errorf("peer results %s: %s has no results for question %s", path, name, q.ID)
			}
			p.outcomes[i] = eval.Outcome{Units: got.Results, NotFound: len(got.Results) == 0,
				Elapsed: time.Duration(got.Millis * float64(time.Millisecond))}
		}
		out = append(out, p)
	}
	return out, nil
}
