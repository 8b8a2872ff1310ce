package serve

import (
	"bytes"
	"io"
	"math"
	"math/bits"
	"net/http"

	"golang.org/x/sync/semaphore"
)

// bodyChunk is the step in which a request body's memory is reserved from
// the server's body budget as its bytes arrive.
const bodyChunk = 64 << 10

// body is a request body read in full before its handler runs.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (bufferedBody) Close() error { return nil }

var errOverloaded = &apiError{status: http.StatusServiceUnavailable, code: "overloaded",
	msg: "the memory for request bodies (-body-memory) is in use: try again"}

// readBody reads r's body (already capped by MaxBytesReader; length is its
// Content-Length, -1 if unknown) into memory, reserving from budget a chunk
// ahead of the bytes' arrival: a client that trickles its body holds only
// what it has sent, plus one chunk (the first sized by the announced
// length, so that a small body reserves little). Joining several chunks
// reserves the whole first. Reservations never wait (TryAcquire): a
// request holding part of what it needs never waits on another, and one
// that does not fit is refused (503). release returns the reservation once
// the handler is done.
func readBody(r io.Reader, length int64, budget *semaphore.Weighted) (data []byte, release func(), err error) {
	var held int64
	giveBack := func() { budget.Release(held) }
	take := func(n int64) bool {
		if !budget.TryAcquire(n) {
			return false
		}
		held += n
		return true
	}
	defer func() {
		if err != nil {
			giveBack()
		}
	}()
	var chunks [][]byte
	total := 0
	for {
		size := int64(bodyChunk)
		if len(chunks) == 0 && length >= 0 && length < size {
			size = length + 1 // +1: to see the end
		}
		if !take(size) {
			return nil, nil, errOverloaded
		}
		c := make([]byte, size)
		n, rerr := io.ReadFull(r, c)
		chunks = append(chunks, c[:n])
		total += n
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return nil, nil, bodyError(rerr, "request body")
		}
	}
	if length >= 0 && int64(total) != length {
		return nil, nil, cancelled(io.ErrUnexpectedEOF) // the client went away mid-body
	}
	if len(chunks) == 1 {
		return chunks[0], giveBack, nil
	}
	chunksHeld := held
	if !take(int64(total)) {
		return nil, nil, errOverloaded
	}
	data = bytes.Join(chunks, nil)
	budget.Release(chunksHeld) // the chunks are garbage now
	held -= chunksHeld
	return data, giveBack, nil
}

// mulCap is a × b for non-negative ints, or math.MaxInt where that
// would overflow: a cap computed from limits that cannot wrap.
func mulCap(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

// addCap is a + b for non-negative ints, or math.MaxInt where that would
// overflow.
func addCap(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// mul64 is a × b for non-negative int64s, and whether it fits.
func mul64(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int64(lo), hi == 0 && lo <= math.MaxInt64
}

// add64 is a + b for non-negative int64s, and whether it fits.
func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, s >= a
}
