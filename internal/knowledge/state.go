package knowledge

import (
	"context"
)

// IndexState is what the alias serves: the generation, its embedder and
// its row count. Exists is false before the first complete ingestion.
type IndexState struct {
	Exists     bool
	Generation Generation
	Rows       int64
	// SchemaErr says why the served collection does not fit the store
	// (e.g. other vector dimensions); nil when it fits.
	SchemaErr error
}

// State reads what the alias serves.
func (s *Store) State(ctx context.Context) (IndexState, error) {
	gen, ok, err := s.Active(ctx)
	if err != nil || !ok {
		return IndexState{}, err
	}
	state := IndexState{Exists: true, Generation: gen}
	if state.SchemaErr = s.verify(ctx, gen.Collection); state.SchemaErr != nil {
		return state, nil
	}
	if state.Rows, err = s.Count(ctx, gen.Collection); err != nil {
		return IndexState{}, err
	}
	return state, nil
}

// ReadIndexState connects and reads what alias serves: the operator's view
// of a KnowledgeStore's index.
func ReadIndexState(ctx context.Context, conn Connection, alias string, dim int) (IndexState, error) {
	client, err := Connect(ctx, conn)
	if err != nil {
		return IndexState{}, err
	}
	defer func() { _ = client.Close(context.WithoutCancel(ctx)) }()
	return NewStore(client, alias, dim).State(ctx)
}
