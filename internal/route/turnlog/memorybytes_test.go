package turnlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

const testBudget = 1 << 20

// heldBytes is what the turns' events still readable hold, as JSON: the
// measure is the log's readers', not its own accounting.
func heldBytes(t *testing.T, log Log, ids []string) (held int, readable []string) {
	t.Helper()
	for _, id := range ids {
		events, _, err := log.Read(context.Background(), id, 0, 0)
		if errors.Is(err, ErrTurnNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		readable = append(readable, id)
		for _, ev := range events {
			data, _ := json.Marshal(ev.Data)
			held += len(data)
		}
	}
	return held, readable
}

// runTurn starts a turn, appends deltas of size bytes each, and ends it
// unless running; it returns the turn's last event.
func runTurn(t *testing.T, log Log, id string, deltas, size int, running bool) turn.Event {
	t.Helper()
	ctx := context.Background()
	if err := log.Start(ctx, id, "ann"); err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	text := strings.Repeat("a", size)
	for i := 0; i < deltas; i++ {
		if err := log.Append(ctx, id, turn.Event{Type: turn.EventDelta, Data: turn.Delta{Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	if !running {
		if err := log.Append(ctx, id, turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{}}); err != nil {
			t.Fatal(err)
		}
	}
	events, _, err := log.Read(ctx, id, 0, 0)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return events[len(events)-1]
}

// The memory log holds its events within its byte budget, however many
// turns it may count: the oldest finished turns give way, the newest stay
// readable. (It was bounded by turns alone: 10,000 turns of 29 KiB held
// about 290 MiB of a 512 MiB pod.)
func TestMemoryLogKeepsItsEventsWithinItsByteBudget(t *testing.T) {
	log := NewMemory(time.Hour, 10000, testBudget, time.Now)
	var ids []string
	for i := 0; i < 100; i++ { // 100 turns of 40 KiB: four times the budget
		ids = append(ids, fmt.Sprint("turn-", i))
		runTurn(t, log, ids[i], 10, 4<<10, false)
	}
	held, readable := heldBytes(t, log, ids)
	if held > testBudget {
		t.Errorf("the log holds %d bytes of events, over its budget of %d", held, testBudget)
	}
	if len(readable) < 20 || readable[len(readable)-1] != "turn-99" || readable[0] == "turn-0" {
		t.Errorf("readable turns %v: want the newest 20 or more, oldest freed first", readable)
	}
}

// One turn larger than the budget ends with too_long at its share of the
// budget, without pushing the other users' finished turns out; running
// turns that hold the whole budget refuse a new turn, as a full log does.
func TestOneTurnCannotTakeTheMemoryLogsWholeBudget(t *testing.T) {
	log := NewMemory(time.Hour, 10000, testBudget, time.Now)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, fmt.Sprint("small-", i))
		runTurn(t, log, ids[i], 2, 1<<10, false)
	}
	last := runTurn(t, log, "huge", 512, 4<<10, true) // 2 MiB: twice the budget
	if code, _ := last.Data.(turn.Failed); last.Type != turn.EventError || code.Code != "too_long" {
		t.Fatalf("the huge turn's last event is %s %s, want a too_long error", last.Type, code.Code)
	}
	held, readable := heldBytes(t, log, append(ids, "huge"))
	if len(readable) != 6 {
		t.Errorf("readable turns %v: the huge turn pushed the others out", readable)
	}
	if held > testBudget/turnShare+8<<10 {
		t.Errorf("the log holds %d bytes, want the huge turn cut at its share of %d", held, testBudget/turnShare)
	}
	// Running turns, each within its share, fill the budget: a new turn
	// is refused, as when running turns fill the count.
	var running []string
	for i := 0; ; i++ {
		id := fmt.Sprint("running-", i)
		if err := log.Start(context.Background(), id, "bob"); errors.Is(err, ErrTooManyTurns) {
			break
		} else if err != nil || i > 100 {
			t.Fatalf("running turn %d: %v; want ErrTooManyTurns once running turns hold the budget", i, err)
		}
		running = append(running, id)
		for j := 0; j < 14; j++ {
			_ = log.Append(context.Background(), id, turn.Event{Type: turn.EventDelta, Data: turn.Delta{Text: strings.Repeat("b", 4<<10)}})
		}
	}
	if held, _ := heldBytes(t, log, append(append(ids, "huge"), running...)); held > testBudget {
		t.Errorf("running turns hold %d bytes, over the budget of %d", held, testBudget)
	}
}
