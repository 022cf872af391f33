package turn

// turn is one turn being played: its methods are the steps both modes
// take (call the model, search, pack, answer), so what a step needs of
// the turn is the receiver, and its parameters are only what varies.
type turn struct {
	engine *Engine
	// in is the turn's input; its conversation is trimmed into the
	// window once, at the start (trimHistory), and every step reads it
	// trimmed.
	in Input
	// prompt is the route's, in the question's language.
	prompt Prompt
	// sink hears each event of the turn (Engine.Run's emit).
	sink  func(Event)
	state *turnState
}

func newTurn(e *Engine, in Input, emit func(Event)) *turn {
	return &turn{engine: e, in: in, prompt: e.Prompt.forQuestion(in.Question()), sink: emit, state: newTurnState()}
}

// notFound streams the not-found wording in the question's language.
func (t *turn) notFound() (bool, error) {
	return true, t.delta(t.prompt.notFound())
}

// delta streams a piece of the answer.
func (t *turn) delta(text string) error {
	t.emit(Delta{Text: text})
	return nil
}

// emit sends the event that carries p.
func (t *turn) emit(p Payload) { t.sink(NewEvent(p)) }
