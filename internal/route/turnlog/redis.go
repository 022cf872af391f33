package turnlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Redis keeps each turn's events in a Redis Stream, so any replica
// can serve and resume any turn. The replica running a turn keeps a short
// heartbeat key alive; a reader that finds the heartbeat gone before the
// last event ends the turn with an error event instead of waiting forever.
// The owner and every event are sealed for their key: a turn whose owner
// does not open is not found, and an event that does not open ends the
// stream with turn_lost; neither is ever shown.
type Redis struct {
	client *redis.Client
	sealer *seal.Sealer
	// Waits serves the blocking reads of waiting streams. Each waiting
	// stream holds one of its connections for up to the wait, so it must
	// not share a pool with the writes of running turns; nil uses client.
	Waits     *redis.Client
	prefix    string
	retention time.Duration
	// Heartbeat is how often the running replica says it is alive; a turn
	// whose heartbeat is older than 3 beats is lost.
	Heartbeat time.Duration

	mu      sync.Mutex
	running map[string]context.CancelFunc // heartbeats of turns this replica runs
}

var _ Log = (*Redis)(nil)

// NewRedis stores turns under prefix (one per route), sealed by sealer.
func NewRedis(client *redis.Client, sealer *seal.Sealer, prefix string, retention time.Duration) *Redis {
	return &Redis{client: client, sealer: sealer, prefix: prefix, retention: retention, Heartbeat: time.Second, running: map[string]context.CancelFunc{}}
}

func (l *Redis) key(id, part string) string { return l.prefix + "turn:" + id + ":" + part }

// ownerField is where the owner is sealed for: its hash and field.
func (l *Redis) ownerField(id string) string { return l.key(id, "meta") + "#owner" }

// openOwner is the owner sealed in a meta hash's field; false when it
// does not open.
func (l *Redis) openOwner(id string, sealed any) (string, bool) {
	s, ok := sealed.(string)
	if !ok {
		return "", false
	}
	owner, ok := l.sealer.Open(l.ownerField(id), []byte(s))
	return string(owner), ok
}

// sealEvent is an event's type and data as stored in the turn's stream,
// sealed for it: the type is sealed too, so no event passes for another.
func (l *Redis) sealEvent(id, typ string, data []byte) []byte {
	record := append([]byte(typ+"\x00"), data...)
	return l.sealer.Seal(l.key(id, "events"), record)
}

// openEvent is sealEvent's type and data; false when the entry does not
// open.
func (l *Redis) openEvent(id string, msg redis.XMessage) (typ string, data []byte, ok bool) {
	sealed, _ := msg.Values["event"].(string)
	record, ok := l.sealer.Open(l.key(id, "events"), []byte(sealed))
	if !ok {
		return "", nil, false
	}
	typ, rest, ok := strings.Cut(string(record), "\x00")
	return typ, []byte(rest), ok
}

// runningTurn is how long a turn may run: a running turn's keys expire
// this long after its last event, so those of a replica that died
// mid-turn go too.
const runningTurn = time.Hour

// Start records the owner and starts the turn's heartbeat.
func (l *Redis) Start(ctx context.Context, id, owner string) error {
	pipe := l.client.TxPipeline()
	pipe.HSet(ctx, l.key(id, "meta"), "owner", l.sealer.Seal(l.ownerField(id), []byte(owner)), "next", 0)
	pipe.Expire(ctx, l.key(id, "meta"), l.retention+runningTurn)
	pipe.Set(ctx, l.key(id, "alive"), "1", 3*l.Heartbeat)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("start turn in redis: %w", err)
	}
	beat, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.mu.Lock()
	l.running[id] = cancel
	l.mu.Unlock()
	go func() {
		ticker := time.NewTicker(l.Heartbeat)
		defer ticker.Stop()
		for {
			select {
			case <-beat.Done():
				return
			case <-ticker.C:
				l.client.Set(beat, l.key(id, "alive"), "1", 3*l.Heartbeat)
			}
		}
	}()
	return nil
}

// appendEvent numbers an event and adds it to the stream in one round
// trip: the number is taken atomically, since a reader on another replica
// may append turn_lost while the owner still writes. The first final
// event's id is kept in the meta hash as "final", so a reader resuming at
// or past it ends without waiting for an event that will never come.
// Every event sets the expiry of the meta hash and the stream (ARGV[3]
// ms; the retention after a final event, which also ends the heartbeat
// KEYS[3]), so no key of the turn outlives it, even one whose replica
// died before the end.
var appendEvent = redis.NewScript(`
local seq = redis.call('HINCRBY', KEYS[1], 'next', 1)
redis.call('XADD', KEYS[2], '0-' .. seq, 'event', ARGV[1])
if ARGV[2] == '1' then
  redis.call('HSETNX', KEYS[1], 'final', seq)
  redis.call('DEL', KEYS[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return seq`)

// Append adds ev with the next id (0-1, 0-2, … in the stream). A final
// event ends the turn's heartbeat even when it cannot be written: the
// replica is done with the turn, so a reader ends with turn_lost rather
// than wait for an event that will never come.
func (l *Redis) Append(ctx context.Context, id string, ev turn.Event) error {
	if ev.Final() {
		defer l.stopHeartbeat(id)
	}
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return err
	}
	final, expiry := "0", l.retention+runningTurn
	if ev.Final() {
		final, expiry = "1", l.retention
	}
	keys := []string{l.key(id, "meta"), l.key(id, "events"), l.key(id, "alive")}
	if err := appendEvent.Run(ctx, l.client, keys, l.sealEvent(id, ev.Type, data), final, expiry.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("append turn event: %w", err)
	}
	return nil
}

func (l *Redis) stopHeartbeat(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cancel, ok := l.running[id]; ok {
		cancel()
		delete(l.running, id)
	}
}

// Read returns events after `after`, blocking up to wait.
func (l *Redis) Read(ctx context.Context, id string, after int64, wait time.Duration) ([]turn.Event, bool, error) {
	meta, err := l.client.HMGet(ctx, l.key(id, "meta"), "owner", "final").Result()
	if err != nil {
		return nil, false, fmt.Errorf("read turn meta: %w", err)
	}
	if _, ok := l.openOwner(id, meta[0]); !ok {
		return nil, false, ErrTurnNotFound
	}
	// A browser's EventSource reconnects with the last event's id after
	// the stream closes normally: nothing follows, so say done at once
	// rather than block until the turn expires.
	if final, ok := meta[1].(string); ok {
		if last, err := strconv.ParseInt(final, 10, 64); err == nil && after >= last {
			return nil, true, nil
		}
	}
	waits := l.Waits
	if waits == nil {
		waits = l.client
	}
	streams, err := waits.XRead(ctx, &redis.XReadArgs{
		Streams: []string{l.key(id, "events"), "0-" + strconv.FormatInt(after, 10)}, Block: wait, Count: 1000,
	}).Result()
	if errors.Is(err, redis.Nil) {
		done, err := l.finishedBy(ctx, id, after)
		return nil, done, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("read turn events: %w", err)
	}
	var events []turn.Event
	done := false
	for _, s := range streams {
		for _, msg := range s.Messages {
			seq, err := strconv.ParseInt(strings.TrimPrefix(msg.ID, "0-"), 10, 64)
			if err != nil {
				return nil, false, fmt.Errorf("turn event id %q: %w", msg.ID, err)
			}
			typ, data, ok := l.openEvent(id, msg)
			if !ok {
				// Not the route's event: the turn ends here, unseen.
				return append(events, tamperedEvent(seq)), true, nil
			}
			payload, err := turn.Decode(typ, data)
			if err != nil {
				// Sealed by a replica, so ours; a version's payload this
				// build cannot read still reaches the client as written.
				payload = turn.Unknown{Type: typ, Raw: data}
			}
			ev := turn.Event{ID: seq, Type: typ, Data: payload}
			events = append(events, ev)
			done = done || ev.Final()
		}
	}
	return events, done, nil
}

// finishedBy is called when nothing came after `after`. It says whether
// the turn's last event is at or before `after` (a turn finished by a
// replica that did not record "final" in the meta hash), and ends a turn
// whose replica stopped beating: readers get an error event, once,
// instead of keep-alives forever.
func (l *Redis) finishedBy(ctx context.Context, id string, after int64) (bool, error) {
	alive, err := l.client.Exists(ctx, l.key(id, "alive")).Result()
	if err != nil {
		return false, fmt.Errorf("check turn heartbeat: %w", err)
	}
	if alive > 0 {
		return false, nil
	}
	last, err := l.client.XRevRangeN(ctx, l.key(id, "events"), "+", "-", 1).Result()
	if err != nil {
		return false, fmt.Errorf("read last turn event: %w", err)
	}
	if len(last) > 0 {
		if t, _, _ := l.openEvent(id, last[0]); t == turn.EventTurnCompleted || t == turn.EventError {
			// Finished: done if the reader has the last event, else the
			// next read returns it.
			seq, err := strconv.ParseInt(strings.TrimPrefix(last[0].ID, "0-"), 10, 64)
			return err == nil && seq <= after, nil
		}
	}
	lost := turn.NewEvent(turn.Failed{Code: "turn_lost", Message: "the replica running this turn stopped before it finished"})
	// The script's HINCRBY gives a fresh id even if the dead writer's last
	// id was taken.
	return false, l.Append(ctx, id, lost)
}

// Owner says who started the turn; a turn whose owner does not open (a
// forged or copied owner) is not found.
func (l *Redis) Owner(ctx context.Context, id string) (string, error) {
	sealed, err := l.client.HGet(ctx, l.key(id, "meta"), "owner").Result()
	if errors.Is(err, redis.Nil) {
		return "", ErrTurnNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read turn owner: %w", err)
	}
	owner, ok := l.openOwner(id, sealed)
	if !ok {
		return "", ErrTurnNotFound
	}
	return owner, nil
}

// tamperedEvent ends, with turn_lost at id, a stream whose event id does
// not open: what Redis holds there is not what the route wrote.
func tamperedEvent(id int64) turn.Event {
	ev := turn.NewEvent(turn.Failed{Code: "turn_lost", Message: "the turn's events in Redis were altered"})
	ev.ID = id
	return ev
}
