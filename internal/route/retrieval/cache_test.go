package retrieval

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/testenv"
)

var redisServer = testenv.NewShared("Redis", testenv.StartRedis)

func TestMain(m *testing.M) {
	code := m.Run()
	redisServer.Stop()
	os.Exit(code)
}

// staffAnn is a user's principals, and forgedGroup one JWT group holding
// both of them joined by the separator the old key used.
var (
	staffAnn    = []string{"user:ann", "group:staff"}
	forgedGroup = []string{"group:staff\x1fuser:ann"}
)

func TestCacheKey(t *testing.T) {
	type request struct {
		query      string
		principals []string
		generation int64
	}
	ann := func(query string) request { return request{query, staffAnn, 1} }
	for _, tc := range []struct {
		name  string
		a, b  request
		share bool
	}{
		{"principals joined by a separator a group may hold", ann("sync waves"), request{"sync waves", forgedGroup, 1}, false},
		{"symbols are part of the question", ann("C++ setup"), ann("c setup"), false},
		{"emoji-only questions", ann("🚀"), ann("🔥"), false},
		{"emoji after the same words", ann("deploy 🚀"), ann("deploy 🔥"), false},
		{"non-Latin text", ann("同步波"), ann("同步"), false},
		{"principals are not the query", request{"b", []string{"a"}, 1}, request{"", []string{"a", "b"}, 1}, false},
		{"another generation", ann("sync waves"), request{"sync waves", staffAnn, 2}, false},
		{"another identity", ann("sync waves"), request{"sync waves", []string{"user:bob", "group:staff"}, 1}, false},
		{"case and whitespace", ann("How do  Sync\tWaves work"), ann(" how do sync waves WORK "), true},
		{"a trailing question mark", ann("How do sync waves work?"), ann("how do sync waves work"), true},
		{"case of non-Latin letters", ann("Синхронизация"), ann("синхронизация"), true},
		{"Unicode normal form", ann("caf\u00e9 menu"), ann("cafe\u0301 menu"), true},
		{"principal order", request{"sync", []string{"public", "group:a"}, 1}, request{"sync", []string{"group:a", "public"}, 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := cacheKey(tc.a.query, tc.a.principals, tc.a.generation)
			b := cacheKey(tc.b.query, tc.b.principals, tc.b.generation)
			if (a == b) != tc.share {
				t.Errorf("%q %q (generation %d) and %q %q (generation %d) share a key: %v, want %v",
					tc.a.query, tc.a.principals, tc.a.generation, tc.b.query, tc.b.principals, tc.b.generation, a == b, tc.share)
			}
		})
	}
}

// aclIndex answers each query with its own hits, those whose ACL holds one
// of the asker's principals, as Milvus' filter does.
type aclIndex struct {
	hits     map[string][]knowledge.Hit
	searches int
}

func (x *aclIndex) HybridSearch(_ context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error) {
	x.searches++
	var out []knowledge.Hit
	for _, h := range x.hits[req.Query] {
		for _, p := range req.Principals {
			if slices.Contains(h.ACL, p) {
				out = append(out, h)
				break
			}
		}
	}
	return out, nil
}

func (x *aclIndex) Parts(context.Context, []string, []string) (map[string][]knowledge.Row, error) {
	return map[string][]knowledge.Row{}, nil
}

func (x *aclIndex) Current(_ context.Context, ids, parents, principals []string) ([]knowledge.RowVersion, error) {
	var rows []knowledge.Row
	for _, hits := range x.hits {
		rows = append(rows, rowsOf(hits)...)
	}
	return currentOf(rows, ids, parents, principals), nil
}

func aclHit(id string, acl ...string) knowledge.Hit {
	h := hit(id, id, 1, "prose")
	h.ACL = acl
	return h
}

// checkCollisionsAreNotServed searches what once shared a cache entry,
// through cache: each search must reach the index and find its own
// fragments, never the entry of the other.
func checkCollisionsAreNotServed(t *testing.T, cache Cache) {
	t.Helper()
	index := &aclIndex{hits: map[string][]knowledge.Hit{
		"staff handbook": {aclHit("handbook", "group:staff")},
		"C++ setup":      {aclHit("cpp", "public")},
		"C setup":        {aclHit("c", "public")},
		"🚀":              {aclHit("rocket", "public")},
		"🔥":              {aclHit("fire", "public")},
	}}
	gen := int64(1)
	s := newSearcher(index, &gen)
	s.Cache = cache
	search := func(query string, principals []string) Retrieval {
		t.Helper()
		r, err := s.Search(context.Background(), query, principals)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ids := func(r Retrieval) string {
		var out []string
		for _, f := range r.Fragments {
			out = append(out, f.ID)
		}
		return fmt.Sprint(out)
	}

	if r := search("staff handbook", staffAnn); ids(r) != "[handbook]" {
		t.Fatalf("ann found %s", ids(r))
	}
	if r := search("staff handbook", staffAnn); !r.CacheHit {
		t.Fatal("the same search missed the cache: it proves nothing")
	}
	if r := search("staff handbook", forgedGroup); r.CacheHit || len(r.Fragments) != 0 {
		t.Errorf("a group named like ann's principals joined got %s (cache hit %v)", ids(r), r.CacheHit)
	}
	for _, pair := range [][2]string{{"C++ setup", "C setup"}, {"🚀", "🔥"}} {
		first, second := search(pair[0], []string{"public"}), search(pair[1], []string{"public"})
		if second.CacheHit || ids(second) == ids(first) {
			t.Errorf("%q was served %s (cache hit %v) after %q", pair[1], ids(second), second.CacheHit, pair[0])
		}
	}
	if index.searches != 6 {
		t.Errorf("%d index searches, want one per distinct search", index.searches)
	}
}

func TestMemoryCacheServesNoEntryToACollidingRequest(t *testing.T) {
	checkCollisionsAreNotServed(t, NewMemoryCache(10, time.Minute, time.Now))
}

func TestRedisCacheServesNoEntryToACollidingRequest(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	checkCollisionsAreNotServed(t, NewRedisCache(client, sealtest.New(t), fmt.Sprintf("t%d:", time.Now().UnixNano()), time.Minute))
}

// The shared cache answers within the search's context: a cancelled turn
// does not wait on Redis, and misses.
func TestRedisCacheHonoursTheSearchsContext(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Get(t).Addr})
	t.Cleanup(func() { _ = client.Close() })
	cache := NewRedisCache(client, sealtest.New(t), fmt.Sprintf("t%d:", time.Now().UnixNano()), time.Minute)
	ctx := context.Background()
	cache.Put(ctx, "k", []Fragment{{ID: "a", Text: "kept"}})
	if got, ok := cache.Get(ctx, "k"); !ok || got[0].Text != "kept" {
		t.Fatalf("Get = %+v, %v: want the entry put", got, ok)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := cache.Get(cancelled, "k"); ok {
		t.Error("a cancelled search was served from Redis")
	}
	cache.Put(cancelled, "other", []Fragment{{ID: "b"}})
	if _, ok := cache.Get(ctx, "other"); ok {
		t.Error("a cancelled search wrote to Redis")
	}
}
