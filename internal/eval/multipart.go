package eval

import (
	"fmt"
	"strconv"
)

// Multi-part questions (test/eval/multipart.jsonl): one question that
// needs two or three sections, usually of different documents, each part
// with its own gold section. A line of the single-part shape (dev.jsonl)
// is read as a question of one part, so the agentic evaluation also runs
// on the retrieval question sets.

// MultiQuestion is one line of a multi-part question set.
type MultiQuestion struct {
	ID         string `json:"id"`
	Question   string `json:"question"`
	Parts      []Part `json:"parts"`
	Difficulty string `json:"difficulty"`
}

// Part is what one part of a question asks and where the answer is.
type Part struct {
	Part        string   `json:"part"`
	GoldFile    string   `json:"gold_file"`
	GoldHeading []string `json:"gold_heading_path"`
	Answer      string   `json:"answer"`
}

// MultiPart reports whether the question has more than one part; a
// question of one part is a single-part control.
func (q MultiQuestion) MultiPart() bool { return len(q.Parts) > 1 }

// PartID names part i (0-based) of question id as the gold sections key
// it: "m001#1", "m001#2", ….
func PartID(id string, i int) string { return id + "#" + strconv.Itoa(i+1) }

// PartQuestions are the questions' parts as single-part questions, each
// with the whole question's text, in order: the gold sections and the
// shared search preparation then work on them unchanged.
func PartQuestions(questions []MultiQuestion) []Question {
	var out []Question
	for _, q := range questions {
		for i, p := range q.Parts {
			file := p.GoldFile
			out = append(out, Question{ID: PartID(q.ID, i), Question: q.Question, GoldFile: &file,
				GoldHeading: p.GoldHeading, Difficulty: q.Difficulty})
		}
	}
	return out
}

// multiLine is a line of either shape.
type multiLine struct {
	MultiQuestion
	GoldFile    *string  `json:"gold_file"`
	GoldHeading []string `json:"gold_heading_path"`
	Answer      string   `json:"answer"`
}

// LoadMultiPart reads a question set of multi-part lines, single-part
// lines (dev.jsonl's shape, read as one part), or both. Unanswerable
// single-part questions have no part to find and are left out.
func LoadMultiPart(path string) ([]MultiQuestion, error) {
	var out []MultiQuestion
	idAndText := func(l multiLine) (string, string) { return l.ID, l.Question }
	err := readQuestionLines(path, idAndText, func(_ int, l multiLine) error {
		q := l.MultiQuestion
		if len(q.Parts) == 0 {
			if l.GoldFile == nil {
				return nil // unanswerable: nothing to find
			}
			q.Parts = []Part{{Part: q.Question, GoldFile: *l.GoldFile, GoldHeading: l.GoldHeading, Answer: l.Answer}}
		}
		for i, p := range q.Parts {
			if p.GoldFile == "" || len(p.GoldHeading) == 0 {
				return fmt.Errorf("part %d of %s needs a gold file and a gold heading path", i+1, q.ID)
			}
		}
		out = append(out, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
