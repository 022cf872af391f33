package ingest

import (
	"context"
	"fmt"
)

// MaxRepeatRatio bounds the text a document's chunks repeat, at this many
// times the document's own bytes: a table's header and a code fence are
// written again in each of its parts, and each part starts with the last
// words of the one before. Past it the document is refused, as the
// repeats are made: a 30 KB header over rows of one short cell made
// chunks of 130 times the page's bytes.
const MaxRepeatRatio = 8

// bounds are what the chunking of one document may spend: the time its
// context leaves, and the bytes of text its chunks may repeat. The
// chunker's loops ask stopped and give up once it is true; Chunks then
// returns why.
type bounds struct {
	ctx         context.Context
	repeatLimit int // bytes the chunks may repeat
	repeated    int
	err         error // why the chunking stopped, once it has
}

func newBounds(ctx context.Context, documentBytes int) bounds {
	return bounds{ctx: ctx, repeatLimit: MaxRepeatRatio * documentBytes}
}

// repeat records n bytes of the document written again in a chunk.
func (b *bounds) repeat(n int) {
	if b.repeated += n; b.repeated > b.repeatLimit && b.err == nil {
		b.err = fmt.Errorf("its chunks would repeat more than %d bytes of it (table headers, code fences, overlaps), %d times its length: refused",
			b.repeatLimit, MaxRepeatRatio)
	}
}

// stopped reports whether the chunking must stop: its context is done,
// or its chunks repeat too much.
func (b *bounds) stopped() bool {
	if b.err == nil {
		if err := b.ctx.Err(); err != nil {
			b.err = fmt.Errorf("chunking stopped: %w", err)
		}
	}
	return b.err != nil
}
