package serve

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
)

// bodyChunk is the step in which a request body's memory is reserved from
// the server's body budget as its bytes arrive.
const bodyChunk = 64 << 10

// budget is memory reserved by requests, up to a limit. A reservation that
// does not fit fails at once rather than waiting, so that requests holding
// part of what they need never wait on each other.
type budget struct {
	limit int64
	used  atomic.Int64
}

// tryTake reserves n bytes if they fit.
func (b *budget) tryTake(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *budget) give(n int64) { b.used.Add(-n) }

// body is a request body read in full before its handler runs.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (bufferedBody) Close() error { return nil }

var errOverloaded = &apiError{status: http.StatusServiceUnavailable, code: "overloaded",
	msg: "the memory for request bodies (-body-memory) is in use: try again"}

// readBody reads r's body (already capped by MaxBytesReader; length is its
// Content-Length, -1 if unknown) into memory, reserving from b a chunk
// ahead of the bytes' arrival: a client that trickles its body holds only
// what it has sent, plus one chunk (the first sized by the announced
// length, so that a small body reserves little). Joining several chunks
// reserves the whole first. If the budget is spent the request is refused
// (503) rather than made to wait. release returns the reservation once
// the handler is done.
func readBody(r io.Reader, length int64, b *budget) (data []byte, release func(), err error) {
	var held int64
	release = func() { b.give(held) }
	var chunks [][]byte
	total := 0
	for {
		size := int64(bodyChunk)
		if len(chunks) == 0 && length >= 0 && length < size {
			size = length + 1 // +1: to see the end
		}
		if !b.tryTake(size) {
			release()
			return nil, nil, errOverloaded
		}
		held += size
		c := make([]byte, size)
		n, err := io.ReadFull(r, c)
		chunks = append(chunks, c[:n])
		total += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			release()
			return nil, nil, bodyError(err, "request body")
		}
	}
	if length >= 0 && int64(total) != length {
		release()
		return nil, nil, cancelled(io.ErrUnexpectedEOF) // the client went away mid-body
	}
	if len(chunks) == 1 {
		return chunks[0], release, nil
	}
	if !b.tryTake(int64(total)) {
		release()
		return nil, nil, errOverloaded
	}
	data = bytes.Join(chunks, nil)
	b.give(held) // the chunks are garbage now
	held = int64(total)
	return data, release, nil
}
