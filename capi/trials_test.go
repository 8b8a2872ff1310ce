package main

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestSetTrialsInputs: s.trials's arrays and options are checked before
// anything is read: embeddings and ids both, the trial list once (a file
// or an array), no unknown array.
func TestSetTrialsInputs(t *testing.T) {
	s := &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor}}
	data := make([]byte, 0, 16)
	for _, v := range []float32{1, 0, 0, 1} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
	}
	emb := rawArray{Name: "embeddings", Data: data, Dtype: "<f4", Shape: []int{2, 2}}
	ids := rawArray{Name: "ids", Data: make([]byte, 16), Dtype: "<i8", Shape: []int{2}}
	for _, c := range []struct {
		name   string
		arrays map[string]rawArray
		o      trialsOptions
		want   string
	}{
		{"no ids", map[string]rawArray{"embeddings": emb}, trialsOptions{TrialsFile: "trials.txt"}, "trials: give the utterances' embeddings and their ids"},
		{"no trial list", map[string]rawArray{"embeddings": emb, "ids": ids}, trialsOptions{}, "trials: give the trial list as a file or as an array of its lines' fields, one of the two"},
		{"an unknown array", map[string]rawArray{"embeddings": emb, "ids": ids, "labels": ids}, trialsOptions{TrialsFile: "trials.txt"}, `trials: unknown array "labels"`},
		{"an unknown unlabeled", map[string]rawArray{"embeddings": emb, "ids": ids}, trialsOptions{TrialsFile: "trials.txt", Unlabeled: "sometimes"}, `trials: unlabeled="sometimes": want error or marginal`},
		{"no such file", map[string]rawArray{"embeddings": emb, "ids": {Name: "ids", Data: binary.LittleEndian.AppendUint64(make([]byte, 8), 1), Dtype: "<i8", Shape: []int{2}}}, trialsOptions{TrialsFile: "/nonexistent/trials.txt"}, "/nonexistent/trials.txt"},
	} {
		if _, _, err := setTrials(s, c.arrays, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
