package turnlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/route/seal"
)

// redisFeedback keeps answered turns and verdicts in the route's Redis,
// under the turn log's prefix, each sealed for its key: an answered turn
// beside the turn's events (turn:<id>:answered), a verdict under
// feedback:<id>, and the rated turns' ids in the sorted set feedback, by
// the time of their verdict, for Verdicts. Every key expires.
type redisFeedback struct {
	client            *redis.Client
	sealer            *seal.Sealer
	prefix            string
	window, retention time.Duration
	now               func() time.Time
}

// NewRedisFeedback keeps answered turns ratable for window and verdicts
// for retention in Redis under prefix (the turn log's), sealed by sealer.
func NewRedisFeedback(client *redis.Client, sealer *seal.Sealer, prefix string, window, retention time.Duration, now func() time.Time) Feedback {
	return &redisFeedback{client: client, sealer: sealer, prefix: prefix, window: window, retention: retention, now: now}
}

func (f *redisFeedback) answeredKey(id string) string { return f.prefix + "turn:" + id + ":answered" }
func (f *redisFeedback) verdictKey(id string) string  { return f.prefix + "feedback:" + id }
func (f *redisFeedback) indexKey() string             { return f.prefix + "feedback" }

func (f *redisFeedback) Keep(ctx context.Context, t AnsweredTurn) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	key := f.answeredKey(t.ID)
	if err := f.client.Set(ctx, key, f.sealer.Seal(key, data), f.window).Err(); err != nil {
		return fmt.Errorf("keep answered turn %s: %w", t.ID, err)
	}
	return nil
}

func (f *redisFeedback) Turn(ctx context.Context, id string) (AnsweredTurn, error) {
	var t AnsweredTurn
	sealed, err := f.client.Get(ctx, f.answeredKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return t, ErrTurnNotFound
	}
	if err != nil {
		return t, fmt.Errorf("read answered turn %s: %w", id, err)
	}
	if !f.open(f.answeredKey(id), sealed, &t) {
		return t, ErrTurnNotFound // not the route's value: never shown
	}
	return t, nil
}

func (f *redisFeedback) Rate(ctx context.Context, t AnsweredTurn, v Verdict) error {
	data, err := json.Marshal(RatedTurn{Turn: t, Verdict: v})
	if err != nil {
		return err
	}
	now := f.now()
	key := f.verdictKey(t.ID)
	pipe := f.client.TxPipeline()
	pipe.Set(ctx, key, f.sealer.Seal(key, data), f.retention)
	pipe.ZAdd(ctx, f.indexKey(), redis.Z{Score: float64(now.UnixMilli()), Member: t.ID})
	// The index forgets what expired with it, and goes when no verdict
	// came for a whole retention.
	pipe.ZRemRangeByScore(ctx, f.indexKey(), "-inf", "("+strconv.FormatInt(now.Add(-f.retention).UnixMilli(), 10))
	pipe.PExpire(ctx, f.indexKey(), f.retention)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("store the verdict on turn %s: %w", t.ID, err)
	}
	return nil
}

// verdictBatch is how many verdicts one MGET reads.
const verdictBatch = 500

func (f *redisFeedback) Verdicts(ctx context.Context) ([]RatedTurn, error) {
	since := strconv.FormatInt(f.now().Add(-f.retention).UnixMilli(), 10)
	ids, err := f.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: f.indexKey(), Start: since, Stop: "+inf", ByScore: true}).Result()
	if err != nil {
		return nil, fmt.Errorf("list verdicts: %w", err)
	}
	var out []RatedTurn
	for start := 0; start < len(ids); start += verdictBatch {
		batch := ids[start:min(start+verdictBatch, len(ids))]
		keys := make([]string, len(batch))
		for i, id := range batch {
			keys[i] = f.verdictKey(id)
		}
		values, err := f.client.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, fmt.Errorf("read verdicts: %w", err)
		}
		for i, v := range values {
			s, ok := v.(string)
			if !ok {
				continue // expired since the index was read
			}
			var rated RatedTurn
			if f.open(keys[i], []byte(s), &rated) {
				out = append(out, rated)
			}
		}
	}
	return out, nil
}

// open reads into v the JSON sealed for key; false when it does not open
// (forged, copied from another key, or sealed under another key).
func (f *redisFeedback) open(key string, sealed []byte, v any) bool {
	data, ok := f.sealer.Open(key, sealed)
	return ok && json.Unmarshal(data, v) == nil
}
