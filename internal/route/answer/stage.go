package answer

// Stage is one filter of the answer as it streams: Write takes the next
// piece of text, Flush what the stage held back once the answer has ended.
// What it lets through goes where the Pipe bound it: the next stage, or
// the client.
type Stage interface {
	Write(text string) error
	Flush() error
	bind(next func(string) error)
}

// outlet is where a stage passes text on; stages embed it and the Pipe
// binds it.
type outlet struct {
	next func(string) error
}

func (o *outlet) bind(next func(string) error) { o.next = next }

// pass sends text on; empty text is not sent.
func (o *outlet) pass(text string) error {
	if text == "" {
		return nil
	}
	return o.next(text)
}

// aborter is a stage with work of its own to stop when the stream fails.
type aborter interface {
	abort()
}

// Pipe is stages composed in order, ending at a sink: what one stage lets
// through is the next one's input. It is the only place stages are wired
// and flushed, so their order is stated once.
type Pipe struct {
	head   func(string) error
	stages []Stage
}

// NewPipe binds each stage to the one after it and the last to sink.
func NewPipe(sink func(string) error, stages ...Stage) *Pipe {
	next := sink
	for i := len(stages) - 1; i >= 0; i-- {
		stages[i].bind(next)
		next = stages[i].Write
	}
	return &Pipe{head: next, stages: stages}
}

// Write takes the next piece of the model's stream.
func (p *Pipe) Write(text string) error { return p.head(text) }

// Flush ends the answer: the stages flush in order, so what one held back
// still passes through those after it.
func (p *Pipe) Flush() error {
	for _, s := range p.stages {
		if err := s.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// Abort ends the pipe after a failed stream or flush: stages with work of
// their own stop it. It may follow a Flush.
func (p *Pipe) Abort() {
	for _, s := range p.stages {
		if a, ok := s.(aborter); ok {
			a.abort()
		}
	}
}
