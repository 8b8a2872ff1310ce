package embed

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/augment"
	"github.com/ccsets/ccs/images"
)

// fake is an encoder in plain Go: features are a few pixel statistics.
type fake struct{ calls int }

func (f *fake) Dim() int         { return 3 }
func (f *fake) Classes() int     { return 2 }
func (f *fake) Activations() int { return 1 }
func (f *fake) Embed(_ context.Context, s *images.Set, progress func(int, int)) (Outputs, error) {
	f.calls++
	feats, logits, acts := make([]float32, 0, 3*s.N), make([]float32, 0, 2*s.N), make([]float32, 0, s.N)
	for i := range s.N {
		img := s.Image(i)
		var sum, left float32
		for j, v := range img {
			sum += v
			if j%s.W < s.W/2 {
				left += v
			}
		}
		feats = append(feats, sum, left, img[0])
		logits = append(logits, sum, -sum)
		acts = append(acts, slices.Max(img))
	}
	if progress != nil {
		progress(s.N, s.N)
	}
	return Outputs{feats, logits, acts}, nil
}

func TestBuild(t *testing.T) {
	t.Parallel()
	s := images.Noise(40, 6, 6, 1)
	s.Labels = make([]int64, s.N)
	for i := range s.Labels {
		s.Labels[i] = int64(i % 3)
	}
	idx := []int{5, 9, 2, 30, 31, 7, 11, 0}
	b, err := Build(context.Background(), &fake{}, s, idx, Config{K: 4, KNeg: 3, Seed: 2, Augment: augment.Default}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.N != 8 || b.K != 4 || b.KNeg != 3 || b.D != 3 || b.C != 2 || b.A != 1 {
		t.Fatalf("shape N %d K %d KNeg %d D %d C %d A %d", b.N, b.K, b.KNeg, b.D, b.C, b.A)
	}
	for j, i := range idx {
		if b.Activations[j] != slices.Max(s.Image(i)) {
			t.Errorf("anchor %d: activation %v, want its image's maximum", j, b.Activations[j])
		}
		if b.Index[j] != int64(i) || b.Labels[j] != s.Labels[i] {
			t.Errorf("anchor %d: index %d label %d, want %d and %d", j, b.Index[j], b.Labels[j], i, s.Labels[i])
		}
		negs := b.NegativeIndex[j*3 : (j+1)*3]
		if slices.Contains(negs, int64(j)) || negs[0] == negs[1] || negs[0] == negs[2] || negs[1] == negs[2] {
			t.Errorf("anchor %d: negatives %v (itself or repeated)", j, negs)
		}
	}
	// An image's views do not depend on the other anchors.
	b2, err := Build(context.Background(), &fake{}, s, []int{30, 1, 2, 3}, Config{K: 4, KNeg: 3, Seed: 2, Augment: augment.Default}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Positives[3*4*3:4*4*3], b2.Positives[:4*3]) {
		t.Error("the views of image 30 changed with the other anchors of the bundle")
	}
	// Without augmentation the views are the image itself.
	b3, _ := Build(context.Background(), &fake{}, s, idx, Config{K: 2, Seed: 2}, nil)
	for j := range idx {
		for v := range 2 {
			if !slices.Equal(b3.Positives[(j*2+v)*3:(j*2+v+1)*3], b3.Anchors[j*3:(j+1)*3]) {
				t.Fatalf("identity augmentation: view %d of anchor %d differs from it", v, j)
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	s := images.Noise(10, 4, 4, 1)
	for _, tc := range []struct {
		idx  []int
		cfg  Config
		want string
	}{
		{[]int{1, 2, 3}, Config{K: 0}, "k = 0"},
		{[]int{1, 2, 3}, Config{K: 2, KNeg: 3}, "want 1 to 2"},
		{[]int{1, 2, 12}, Config{K: 1}, "image 12 is outside"},
		{[]int{1, 2, 3}, Config{K: 1, Augment: augment.Params{Flip: 3}}, "flip probability"},
	} {
		if _, err := Build(context.Background(), &fake{}, s, tc.idx, tc.cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestCache: the first request embeds and stores, the second reads the same
// bundle back without opening the encoder; another number of anchors, seed
// or model content is another entry; a missing model file is an error
// naming it.
func TestCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(model, []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	opened := 0
	c := &Cache{Dir: filepath.Join(dir, "cache"), Seed: 3, Options: struct{ Batch int }{8},
		Open: func(string) (Encoder, error) { opened++; return &fake{}, nil }}
	a, cached, err := c.Bundle(context.Background(), model, "noise:30", 10, 2, nil)
	if err != nil || cached || opened != 1 {
		t.Fatalf("first request: cached %v, opened %d, %v", cached, opened, err)
	}
	b, cached, err := c.Bundle(context.Background(), model, "noise:30", 10, 2, nil)
	if err != nil || !cached || opened != 1 {
		t.Fatalf("second request: cached %v, opened %d, %v", cached, opened, err)
	}
	if !slices.Equal(a.Anchors, b.Anchors) || !slices.Equal(a.Positives, b.Positives) || !slices.Equal(a.Index, b.Index) {
		t.Error("the cached bundle differs from the embedded one")
	}
	if a.N != 10 || a.K != 2 || a.KNeg != 1 {
		t.Errorf("bundle N %d K %d KNeg %d, want 10, 2, 1", a.N, a.K, a.KNeg)
	}
	for _, change := range []func(){
		func() { c.Seed = 4 },
		func() { os.WriteFile(model, []byte("other weights"), 0o644) },
	} {
		change()
		if _, cached, err := c.Bundle(context.Background(), model, "noise:30", 10, 2, nil); err != nil || cached {
			t.Errorf("after a change: cached %v, %v", cached, err)
		}
	}
	if _, cached, err := c.Bundle(context.Background(), model, "noise:30", 0, 2, nil); err != nil || cached {
		t.Errorf("all anchors: cached %v, %v", cached, err)
	}
	if _, _, err := c.Bundle(context.Background(), filepath.Join(dir, "none.onnx"), "noise:30", 10, 2, nil); err == nil || !strings.Contains(err.Error(), "none.onnx") {
		t.Errorf("missing model: %v", err)
	}
}
