package turnlog

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// A log full of finished turns, kept for reconnects, still takes a new
// turn: the oldest finished turn gives way. Only a log full of running
// turns refuses one. (One user's burst of finished turns used to lock
// every user out until the retention ran out.)
func TestFullMemoryLogMakesRoomFromFinishedTurns(t *testing.T) {
	ctx := context.Background()
	log := NewMemory(10*time.Minute, 3, 0, time.Now)
	for i := 0; i < 3; i++ {
		id := fmt.Sprint("done-", i)
		if err := log.Start(ctx, id, "ann"); err != nil {
			t.Fatal(err)
		}
		if err := log.Append(ctx, id, turn.Event{Type: turn.EventTurnCompleted, Data: turn.Completed{}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := log.Start(ctx, fmt.Sprint("running-", i), "bob"); err != nil {
			t.Fatalf("bob's turn %d in a log full of finished turns: %v", i, err)
		}
		// The oldest finished turn went first; the newer ones are still readable.
		if _, err := log.Owner(ctx, fmt.Sprint("done-", i)); !errors.Is(err, ErrTurnNotFound) {
			t.Errorf("after %d new turns, finished turn done-%d: %v, want freed", i+1, i, err)
		}
		for j := i + 1; j < 3; j++ {
			if _, _, err := log.Read(ctx, fmt.Sprint("done-", j), 0, 0); err != nil {
				t.Errorf("after %d new turns, finished turn done-%d: %v, want kept", i+1, j, err)
			}
		}
	}
	if err := log.Start(ctx, "one-too-many", "carol"); !errors.Is(err, ErrTooManyTurns) {
		t.Errorf("a turn past 3 running turns: %v, want ErrTooManyTurns", err)
	}
}
